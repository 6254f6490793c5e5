#!/usr/bin/env bash
# gateway-conformance.sh runs the Gateway API conformance suite (the Go
# module sigs.k8s.io/gateway-api/conformance, at the Gateway API version the
# traefik addon is built with: images/traefik/go.mod, whose CRDs
# hack/update-codegen.sh puts in the chart) against the cluster of
# $KUBECONFIG, on the addons' GatewayClass traefik; nothing pulled from the
# internet:
#
#   hack/gateway-conformance.sh [all|build|images|check|run]     (default all)
#
#   build   in throw-away modules under _output/gateway-conformance/ (nothing
#           of the suite is committed here), with the Kubernetes libraries at
#           the repository's release and controller-runtime at the release
#           built on it: the suite's test binary (conformance.test, the
#           module's own TestConformance, driven by its flags); echo-basic, the
#           suite's backend, from the same module; and CoreDNS at the
#           repository's version (images/coredns/go.mod) with the plugins the
#           suite's Corefile names (errors, log, forward, whoami), for the DNS
#           server of its base workloads. Skipped when built already from this
#           script at these versions.
#   images  every echo-basic and coredns image the suite's base and test
#           manifests name, under those names, built and imported into
#           containerd on every node by hack/conformance.sh's recipes (whose
#           own build it runs first).
#   check   the images on every node and the nodes Ready (hack/conformance.sh
#           check), Traefik rolled out, the GatewayClass Accepted.
#   run     the suite on the GATEWAY-HTTP profile with the features the
#           GatewayClass's status says Traefik supports (those of Gateways,
#           HTTPRoutes, ReferenceGrants and BackendTLSPolicies), less
#           GatewayPort8080 and HTTPRouteParentRefPort: the chart's Traefik
#           has entry points on 80 and 443 only, and Traefik serves a listener
#           only on an entry point of its port; HTTPRouteMultipleGateways, the
#           core test Traefik's own run skips, is skipped. The go test -json stream, a readable log and the suite's
#           report in _output/gateway-conformance/results/; prints each test's
#           result, the profile's core and extended counts, the extended
#           features supported and not, and "N passed, N failed, N skipped";
#           exits non-zero when a test failed.
#
# Environment:
#   KUBECONFIG                   the cluster (default /etc/trireme/admin.conf, make up's)
#   GATEWAY_CONFORMANCE_TEST     one test by its short name (the suite's -run-test,
#                                e.g. HTTPRouteSimpleSameNamespace)
#   GATEWAY_CONFORMANCE_SKIP     comma-separated short names of tests to skip
#                                (default HTTPRouteMultipleGateways; empty runs it)
#   GATEWAY_CONFORMANCE_FLAGS    more flags for the suite, such as -debug or
#                                -cleanup-base-resources=false
#   GATEWAY_CONFORMANCE_TIMEOUT  go test -timeout (default 1h)
#   GATEWAY_CONFORMANCE_REBUILD  1 rebuilds the binaries anyway
#   and hack/conformance.sh's CONFORMANCE_REBUILD, CONTAINERD_ADDRESS and
#   TRIREME_NODES_DIR for the images.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/upstream.sh"

MODULE=sigs.k8s.io/gateway-api/conformance
API_MODULE=sigs.k8s.io/gateway-api
# The release of controller-runtime built on the Kubernetes libraries'
# release (v0.25 is on v0.37); the suite's clients come from it.
CONTROLLER_RUNTIME=v0.25.2
GATEWAY_CLASS=traefik
PROFILE=GATEWAY-HTTP
# Features Traefik claims that this deployment cannot serve: Traefik serves a
# Gateway listener only on an entry point of its port, and the chart's are 80
# and 443; GatewayPort8080's tests and HTTPRouteParentRefPort's
# (HTTPRouteListenerPortMatching) listen on 8080 and 8090.
NOT_SERVED=GatewayPort8080,HTTPRouteParentRefPort
# The core test Traefik's own conformance run skips (its integration test
# gateway_api_conformance_test.go, SkipTests; its published reports say core
# "partial"): every Gateway of the class is served on the same entry points at
# the same address, so a route of one Gateway answers for the others and
# HTTPRouteMultipleGateways gets another Gateway's backend.
TRAEFIK_SKIPS=HTTPRouteMultipleGateways

OUT="${REPO_ROOT}/_output/gateway-conformance"
TEST="${OUT}/conformance.test"
RESULTS="${OUT}/results"
export KUBECONFIG="${KUBECONFIG:-/etc/trireme/admin.conf}"

log() { echo "gateway-conformance: $*" >&2; }
die() {
  log "$*"
  exit 1
}

# api_version prints the version of sigs.k8s.io/gateway-api images/traefik/go.mod requires.
api_version() {
  local v
  v="$(awk -v m="${API_MODULE}" '$1 == m { print $2; exit }' "${REPO_ROOT}/images/traefik/go.mod")"
  [[ -n "${v}" ]] || die "images/traefik/go.mod does not require ${API_MODULE}"
  echo "${v}"
}

# coredns_version prints the CoreDNS version of images/coredns/go.mod.
coredns_version() {
  local v
  v="$(awk '$1 == "github.com/coredns/coredns" { print $2; exit } $2 == "github.com/coredns/coredns" { print $3; exit }' "${REPO_ROOT}/images/coredns/go.mod")"
  [[ -n "${v}" ]] || die "images/coredns/go.mod does not require github.com/coredns/coredns"
  echo "${v}"
}

gateway_conformance::build() {
  local version kube dns stamp mod f
  version="$(api_version)"
  dns="$(coredns_version)"
  kube="v0$(trireme::upstream_version | sed 's/^v1//')"
  stamp="${version} ${kube} ${CONTROLLER_RUNTIME} ${dns} $(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
  if [[ "${GATEWAY_CONFORMANCE_REBUILD:-0}" != 1 && -x "${TEST}" && -x "${OUT}/echo-basic" && -x "${OUT}/coredns" &&
    -f "${OUT}/VERSION" && "$(<"${OUT}/VERSION")" == "${stamp}" ]]; then
    log "the suite of ${MODULE}@${version}, echo-basic and CoreDNS ${dns} are built"
    return
  fi
  log "building the suite and echo-basic of ${MODULE}@${version} (Kubernetes libraries ${kube}, controller-runtime ${CONTROLLER_RUNTIME})"
  mod="${OUT}/module"
  rm -rf "${mod}" "${OUT}/coredns-module" "${OUT}/VERSION"
  mkdir -p "${mod}"
  {
    printf 'module gatewayconformance\n\ngo 1.26.0\n\nrequire (\n'
    printf '\t%s %s\n' "${MODULE}" "${version}" "${API_MODULE}" "${version}" sigs.k8s.io/controller-runtime "${CONTROLLER_RUNTIME}"
    for f in api apimachinery client-go apiextensions-apiserver; do
      printf '\tk8s.io/%s %s\n' "${f}" "${kube}"
    done
    printf ')\n'
  } >"${mod}/go.mod"
  # What the suite's test and echo-basic import, so that tidy pins their modules.
  cat >"${mod}/tools.go" <<'EOF'
//go:build tools

package tools

import (
	_ "sigs.k8s.io/gateway-api/conformance"
	_ "sigs.k8s.io/gateway-api/conformance/echo-basic"
)
EOF
  local gobuild=(env -C "${mod}" GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go)
  "${gobuild[@]}" mod tidy
  # -mod=mod: tidy leaves out what only the tests of a dependency import.
  "${gobuild[@]}" test -c -vet=off -trimpath -ldflags "-s -w" -o "${TEST}" "${MODULE}"
  # As upstream's image: a static binary without build id.
  "${gobuild[@]}" build -trimpath -ldflags "-buildid= -s -w" -o "${OUT}/echo-basic" "${MODULE}/echo-basic"

  log "building CoreDNS ${dns} with errors, log, forward and whoami"
  mod="${OUT}/coredns-module"
  mkdir -p "${mod}"
  printf 'module gatewayconformancedns\n\ngo 1.26.0\n\nrequire github.com/coredns/coredns %s\n' "${dns}" >"${mod}/go.mod"
  cat >"${mod}/main.go" <<'EOF'
// Command coredns is CoreDNS with the plugins the Gateway API suite's Corefile names.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func main() {
	// In the order of CoreDNS's plugin.cfg.
	dnsserver.Directives = []string{"errors", "log", "whoami", "forward"}
	coremain.Run()
}
EOF
  gobuild=(env -C "${mod}" GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go)
  "${gobuild[@]}" mod tidy
  "${gobuild[@]}" build -trimpath -ldflags "-s -w" -o "${OUT}/coredns" .
  echo "${stamp}" >"${OUT}/VERSION"
  log "built ${TEST}, ${OUT}/echo-basic and ${OUT}/coredns"
}

# images_named prints the image references of the suite's manifests that
# hack/conformance.sh has a recipe for (echo-basic and coredns); the others
# (echo-advanced) are those of the TCPRoute and UDPRoute tests.
images_named() {
  local dir
  dir="$(trireme::module_dir "${MODULE}" "$(api_version)")"
  [[ -n "${dir}" && -f "${dir}/base/manifests.yaml" ]] || die "cannot download ${MODULE}@$(api_version)"
  grep -ho 'image: *registry\.k8s\.io/\(gateway-api/echo-basic\|coredns/coredns\):[^ ]*' \
    "${dir}/base/manifests.yaml" "${dir}"/tests/*.yaml | sed 's/^image: *//' | LC_ALL=C sort -u
}

# conformance_sh <step> runs a step of hack/conformance.sh for the suite's images.
conformance_sh() {
  CONFORMANCE_IMAGES='^$' CONFORMANCE_EXTRA_IMAGES="$(images_named | paste -sd ' ')" "${REPO_ROOT}/hack/conformance.sh" "$1"
}

gateway_conformance::images() {
  [[ -x "${OUT}/echo-basic" && -x "${OUT}/coredns" ]] || die "echo-basic or coredns missing: hack/gateway-conformance.sh build"
  log "images: $(images_named | paste -sd ' ')"
  conformance_sh build
  conformance_sh images
}

gateway_conformance::check() {
  conformance_sh check
  kubectl -n kube-system rollout status deployment/traefik --timeout=120s >&2 ||
    die "Traefik is not running (the addons chart's traefik subchart)"
  kubectl wait --for=condition=Accepted "gatewayclass/${GATEWAY_CLASS}" --timeout=60s >&2 ||
    die "GatewayClass ${GATEWAY_CLASS} is not Accepted"
}

# supported_features prints, comma-separated, the features of the
# GatewayClass's status that the profile's tests use, less NOT_SERVED.
supported_features() {
  kubectl get gatewayclass "${GATEWAY_CLASS}" -o jsonpath='{range .status.supportedFeatures[*]}{.name}{"\n"}{end}' |
    grep -E '^(Gateway|HTTPRoute|ReferenceGrant|BackendTLSPolicy)' | grep -vxF -f <(tr ',' '\n' <<<"${NOT_SERVED}") |
    LC_ALL=C sort | paste -sd ,
}

# report <test.json> <report.yaml> prints each test's result, the counts and
# the profile's results from the suite's report.
report() {
  jq -r -s '
    map(select(.Test != null and (.Test | test("^TestConformance/[^/]+$"))
      and (.Action == "pass" or .Action == "fail" or .Action == "skip")))
    | (map("  \(.Action | ascii_upcase) \(.Test | ltrimstr("TestConformance/"))") | sort[]),
      "\(map(select(.Action == "pass")) | length) passed, \(map(select(.Action == "fail")) | length) failed, \(map(select(.Action == "skip")) | length) skipped"
  ' "$1"
  [[ -f "$2" ]] || { echo "no report $2"; return; }
  # The profile's core and extended results, the extended features
  # supported and not, as the suite's report (YAML) words them.
  echo "the suite's report (${2}):"
  sed -n '/^profiles:/,/^[a-zA-Z]/{/^profiles:/d;/^[a-zA-Z]/d;p}' "$2"
}

gateway_conformance::run() {
  [[ -x "${TEST}" ]] || die "${TEST} missing: hack/gateway-conformance.sh build"
  rm -rf "${RESULTS}"
  mkdir -p "${RESULTS}"
  local features start rc=0 flags
  features="$(supported_features)"
  [[ -n "${features}" ]] || die "GatewayClass ${GATEWAY_CLASS} lists no supported features in its status"
  flags=(
    -gateway-class="${GATEWAY_CLASS}"
    -conformance-profiles="${PROFILE}"
    -supported-features="${features}"
    -report-output="${RESULTS}/report.yaml"
    -organization=trireme -project=trireme-addons-traefik -url=https://trireme.dev
    -version="$(git -C "${REPO_ROOT}" describe --always --dirty)" -contact=trireme
  )
  [[ -n "${GATEWAY_CONFORMANCE_TEST:-}" ]] && flags+=(-run-test="${GATEWAY_CONFORMANCE_TEST}")
  local skip="${GATEWAY_CONFORMANCE_SKIP-${TRAEFIK_SKIPS}}"
  if [[ -n "${skip}" ]]; then
    flags+=(-skip-tests="${skip}")
    log "skipping ${skip}${GATEWAY_CONFORMANCE_SKIP+ (GATEWAY_CONFORMANCE_SKIP)}${GATEWAY_CONFORMANCE_SKIP- (Traefik's own run skips it: each Gateway's routes answer on every Gateway of the class)}"
  fi
  log "not served by the chart's entry points (80, 443): ${NOT_SERVED}"
  start="$(date +%s)"
  log "running ${PROFILE} on GatewayClass ${GATEWAY_CLASS} against ${KUBECONFIG}; features ${features}"
  # shellcheck disable=SC2086 # GATEWAY_CONFORMANCE_FLAGS is a list of flags
  (cd "${RESULTS}" && "${TEST}" -test.run '^TestConformance$' -test.v=test2json \
    -test.timeout "${GATEWAY_CONFORMANCE_TIMEOUT:-1h}" "${flags[@]}" ${GATEWAY_CONFORMANCE_FLAGS:-}) 2>&1 |
    go tool test2json -t >"${RESULTS}/conformance.json" || rc=$?
  jq -j 'select(.Action == "output") | .Output' "${RESULTS}/conformance.json" >"${RESULTS}/conformance.log"
  echo
  echo "Gateway API conformance, ${MODULE}@$(api_version), GatewayClass ${GATEWAY_CLASS}:"
  report "${RESULTS}/conformance.json" "${RESULTS}/report.yaml"
  echo "wall time $(($(date +%s) - start))s; the log, go test -json stream and report in ${RESULTS}"
  return "${rc}"
}

trireme::suite_steps gateway_conformance "$@"
