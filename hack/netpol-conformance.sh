#!/usr/bin/env bash
# netpol-conformance.sh runs the conformance suite of the network-policy-api
# project (the conformance/ package of the Go module sigs.k8s.io/network-policy-api,
# at the version netpol/go.mod requires: ClusterNetworkPolicy's Admin and
# Baseline tiers) against the cluster of $KUBECONFIG, whose trireme-netpol
# addon enforces them; nothing pulled from the internet:
#
#   hack/netpol-conformance.sh [all|build|images|check|run]     (default all)
#
#   build   the suite's test binary, _output/netpol-conformance/conformance.test,
#           from a copy of the module in a throw-away module beside it, with the
#           Kubernetes libraries at the repository's release and
#           controller-runtime at the release built on it (nothing of the
#           suite is committed here). The kernels Trireme runs on have no
#           SCTP, so the copy's base workloads leave out their SCTP servers
#           (they would crash-loop and keep the suite from starting) and each
#           subtest that connects over SCTP skips itself, saying so. Skipped
#           when built already from this script at these versions.
#   images  the suite's workload image (agnhost:2.45) built and imported into
#           containerd on every node by hack/conformance.sh, whose own build
#           (e2e.test and the image binaries) it runs first.
#   check   the image on every node, the nodes Ready (hack/conformance.sh
#           check), the ClusterNetworkPolicy CRD served and trireme-netpol
#           running on every node.
#   run     the suite (TestConformance: its standard features, base resources
#           removed afterwards); the go test -json stream and a readable log in
#           _output/netpol-conformance/results/; prints the tests' and
#           subtests' counts, the reasons of the skipped ones and the failed
#           ones, and "N passed, N failed, N skipped" over the cases that ran
#           alone (subtests, and the tests without any); exits non-zero when
#           one failed.
#
# Environment:
#   KUBECONFIG                   the cluster (default /etc/trireme/admin.conf, make up's)
#   NETPOL_CONFORMANCE_RUN       go test -run regexp (default '^TestConformance$';
#                                e.g. 'TestConformance/CNPAdminTierPriorityField')
#   NETPOL_CONFORMANCE_FLAGS     more flags for the suite, such as -debug or
#                                -cleanup-base-resources=false
#   NETPOL_CONFORMANCE_TIMEOUT   go test -timeout (default 1h)
#   NETPOL_CONFORMANCE_REBUILD   1 rebuilds the test binary anyway
#   and hack/conformance.sh's CONFORMANCE_REBUILD, CONTAINERD_ADDRESS and
#   TRIREME_NODES_DIR for the images.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/upstream.sh"

MODULE=sigs.k8s.io/network-policy-api
# The release of controller-runtime built on the Kubernetes libraries'
# release (v0.25 is on v0.37); the suite's clients come from it.
CONTROLLER_RUNTIME=v0.25.2
# The image the suite's workloads run, as its base manifests name it.
AGNHOST=registry.k8s.io/e2e-test-images/agnhost:2.45
SCTP_SKIP="protocol not supported: this kernel has no SCTP (hack/netpol-conformance.sh)"

OUT="${REPO_ROOT}/_output/netpol-conformance"
TEST="${OUT}/conformance.test"
RESULTS="${OUT}/results"
KUBECTL="${REPO_ROOT}/_output/conformance/kubectl"
export KUBECONFIG="${KUBECONFIG:-/etc/trireme/admin.conf}"

log() { echo "netpol-conformance: $*" >&2; }
die() {
  log "$*"
  exit 1
}

# module_version prints the version of the suite's module netpol/go.mod requires.
module_version() {
  local v
  v="$(trireme::requires netpol | awk -v m="${MODULE}" '$1 == m { print $2 }')"
  [[ -n "${v}" ]] || die "netpol/go.mod does not require ${MODULE}"
  echo "${v}"
}

# without_sctp_servers <manifest>: the containers of the base workloads that
# serve SCTP (agnhost porter with SERVE_SCTP_PORT_*) left out.
without_sctp_servers() {
  local f="$1"
  awk '
    function flush() { if (buf != "" && buf !~ /SERVE_SCTP_PORT_/) printf "%s", buf; buf = "" }
    # A container: "- name:" in a pod template, then its deeper lines.
    /^        - / { flush(); buf = $0 "\n"; next }
    buf != "" && /^         / { buf = buf $0 "\n"; next }
    { flush(); print }
    END { flush() }' "${f}" >"${f}.tmp"
  mv "${f}.tmp" "${f}"
  ! grep -q SERVE_SCTP_PORT_ "${f}" || die "SCTP servers left in ${f}"
}

# skip_sctp_subtests <test.go>: each subtest (t.Run in a test function) that
# connects over SCTP skips itself first. A connection over SCTP outside the
# subtests this recognises stops the build.
skip_sctp_subtests() {
  local f="$1"
  awk -v reason="${SCTP_SKIP}" '
    /^\t\tt\.Run\(".*", func\(t \*testing\.T\) \{$/ { head = $0; body = ""; sctp = 0; open = 1; next }
    open {
      body = body $0 "\n"
      if ($0 ~ /"sctp"/) sctp = 1
      if ($0 ~ /^\t\t\}\)$/) {
        print head
        if (sctp) { printf "\t\t\tt.Skip(%c%s%c)\n", 34, reason, 34; skipped++ }
        printf "%s", body
        open = 0
      }
      next
    }
    /"sctp"/ { stray = 1 }
    { print }
    END {
      if (open || stray) { print FILENAME ": SCTP outside a recognised subtest" > "/dev/stderr"; exit 1 }
    }' "${f}" >"${f}.tmp"
  mv "${f}.tmp" "${f}"
}

netpol_conformance::build() {
  local version kube stamp src mod f
  version="$(module_version)"
  kube="v0$(trireme::upstream_version | sed 's/^v1//')"
  stamp="${version} ${kube} ${CONTROLLER_RUNTIME} $(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
  if [[ "${NETPOL_CONFORMANCE_REBUILD:-0}" != 1 && -x "${TEST}" && -f "${OUT}/VERSION" && "$(<"${OUT}/VERSION")" == "${stamp}" ]]; then
    log "the suite of ${MODULE}@${version} is built"
    return
  fi
  log "building the suite of ${MODULE}@${version} (Kubernetes libraries ${kube}, controller-runtime ${CONTROLLER_RUNTIME})"
  src="${OUT}/network-policy-api"
  mod="${OUT}/module"
  rm -rf "${src}" "${mod}" "${OUT}/VERSION"
  mkdir -p "${mod}"
  f="$(trireme::module_dir "${MODULE}" "${version}")"
  [[ -n "${f}" && -d "${f}/conformance" ]] || die "cannot download ${MODULE}@${version} with its conformance/"
  cp -r "${f}" "${src}"
  chmod -R u+w "${src}"
  without_sctp_servers "${src}/conformance/base/manifests.yaml"
  for f in "${src}"/conformance/tests/*.go; do
    skip_sctp_subtests "${f}"
  done
  log "$(grep -c "t.Skip(\"${SCTP_SKIP}" "${src}"/conformance/tests/*.go | awk -F: '{ n += $2 } END { print n }') subtests over SCTP skip themselves"
  {
    printf 'module netpolconformance\n\ngo 1.26.0\n\nrequire (\n'
    printf '\t%s %s\n' "${MODULE}" "${version}" sigs.k8s.io/controller-runtime "${CONTROLLER_RUNTIME}"
    for f in api apimachinery client-go apiextensions-apiserver; do
      printf '\tk8s.io/%s %s\n' "${f}" "${kube}"
    done
    printf ')\n\nreplace %s => ../network-policy-api\n' "${MODULE}"
  } >"${mod}/go.mod"
  # What the suite's test files import, so that tidy pins their modules.
  cat >"${mod}/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	_ "sigs.k8s.io/controller-runtime/pkg/client/config"
	_ "sigs.k8s.io/network-policy-api/conformance/tests"
	_ "sigs.k8s.io/network-policy-api/conformance/utils/suite"
)
EOF
  local gobuild=(env -C "${mod}" GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go)
  "${gobuild[@]}" mod tidy
  # -mod=mod: tidy leaves out what only the tests of a dependency import.
  "${gobuild[@]}" test -c -vet=off -trimpath -ldflags "-s -w" -o "${TEST}" "${MODULE}/conformance"
  echo "${stamp}" >"${OUT}/VERSION"
  log "built ${TEST}"
}

# conformance_sh <step> runs a step of hack/conformance.sh for the suite's image.
conformance_sh() {
  CONFORMANCE_IMAGES='^$' CONFORMANCE_EXTRA_IMAGES="${AGNHOST}" "${REPO_ROOT}/hack/conformance.sh" "$1"
}

netpol_conformance::images() {
  # Its images are built from the binaries of its build, and listed by e2e.test.
  conformance_sh build
  conformance_sh images
}

netpol_conformance::check() {
  conformance_sh check
  local k=("${KUBECTL}" --kubeconfig "${KUBECONFIG}")
  "${k[@]}" get crd clusternetworkpolicies.policy.networking.k8s.io >/dev/null ||
    die "the ClusterNetworkPolicy CRD is not served (the addons chart's netpol subchart installs it)"
  "${k[@]}" -n kube-system rollout status daemonset/trireme-netpol --timeout=120s >&2 ||
    die "trireme-netpol is not running on every node"
}

# report <test.json> prints the counts, the skipped cases by reason and the
# failed ones, from a go test -json stream.
report() {
  jq -r -s '
    map(select(.Test != null)) as $ev
    | ($ev | map(select(.Action == "pass" or .Action == "fail" or .Action == "skip"))
        | map({key: .Test, value: .Action}) | from_entries) as $result
    | ($result | keys) as $names
    # The reason of a skip: the last line the test logged (file.go:N: why).
    | ($ev | map(select(.Action == "output" and (.Output | test("^ +[^ ]+\\.go:[0-9]+: "))))
        | map({key: .Test, value: (.Output | sub("^ +[^ ]+\\.go:[0-9]+: "; "") | rtrimstr("\n"))})
        | from_entries) as $why
    | def level(n): $names | map(select(split("/") | length == n));
      def count(list): [list[] | $result[.]] as $r
        | "\($r | map(select(. == "pass")) | length) passed, \($r | map(select(. == "fail")) | length) failed, \($r | map(select(. == "skip")) | length) skipped";
      ($names | map(select(. as $n | $names | any(startswith($n + "/")) | not))) as $cases
    | "tests: \(count(level(2)))",
      "subtests: \(count(level(3)))",
      ($cases | map(select($result[.] == "skip")) | map($why[.] // "no reason logged"
          | sub("^Skipping [^:]+: "; ""))
        | group_by(.) | map("  skipped \(length): \(.[0])")[]),
      ($cases | map(select($result[.] == "fail")) | map("  FAIL: \(.)")[]),
      count($cases)
  ' "$1"
}

netpol_conformance::run() {
  [[ -x "${TEST}" ]] || die "${TEST} missing: hack/netpol-conformance.sh build"
  rm -rf "${RESULTS}"
  mkdir -p "${RESULTS}"
  local run="${NETPOL_CONFORMANCE_RUN:-^TestConformance\$}" start rc=0
  start="$(date +%s)"
  log "running ${run} against ${KUBECONFIG}"
  # shellcheck disable=SC2086 # NETPOL_CONFORMANCE_FLAGS is a list of flags
  "${TEST}" -test.run "${run}" -test.v=test2json -test.timeout "${NETPOL_CONFORMANCE_TIMEOUT:-1h}" \
    ${NETPOL_CONFORMANCE_FLAGS:-} 2>&1 | go tool test2json -t >"${RESULTS}/conformance.json" || rc=$?
  jq -j 'select(.Action == "output") | .Output' "${RESULTS}/conformance.json" >"${RESULTS}/conformance.log"
  tail -n 30 "${RESULTS}/conformance.log"
  echo
  echo "ClusterNetworkPolicy conformance, ${MODULE}@$(module_version):"
  report "${RESULTS}/conformance.json"
  echo "wall time $(($(date +%s) - start))s; the log and go test -json stream in ${RESULTS}"
  return "${rc}"
}

trireme::suite_steps netpol_conformance "$@"
