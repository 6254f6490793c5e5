#!/usr/bin/env bash
# Regenerates every generated file of the repository.
#
# Usage: hack/update-codegen.sh [--output-root DIR]
#
# With --output-root the files are written under DIR at the same relative
# paths instead of into the tree; hack/verify.sh uses that to compare fresh
# output with what is committed without touching the working tree.
#
# Each generator is a function gen::<name> that writes below OUTPUT_ROOT;
# add new ones to GENERATORS. Generators run against each module alone
# (GOWORK=off) so that their output depends on that module's go.mod only.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

OUTPUT_ROOT="${REPO_ROOT}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --output-root) OUTPUT_ROOT="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
    *) echo "usage: $0 [--output-root DIR]" >&2; exit 2 ;;
  esac
done

# Generators must not rewrite go.mod or go.sum as a side effect (a caller's
# GOFLAGS=-mod=mod would let go/packages do so); the last -mod flag wins.
READONLY_GOFLAGS="${GOFLAGS:+${GOFLAGS} }-mod=readonly"

TOOLS_DIR="${REPO_ROOT}/hack/tools"
TOOLS_BIN="${TOOLS_DIR}/bin"

# tool::build builds a tool pinned by hack/tools/go.mod's tool directives into
# hack/tools/bin and prints its path. The build cache makes repeat builds
# cheap; building from hack/tools keeps the tools' dependencies out of every
# shipped module's go.mod.
tool::build() {
  local pkg="$1" name
  name="$(basename "${pkg}")"
  GOWORK=off GOFLAGS="${READONLY_GOFLAGS}" go -C "${TOOLS_DIR}" build -o "${TOOLS_BIN}/${name}" "${pkg}"
  echo "${TOOLS_BIN}/${name}"
}

# OPENAPI_PACKAGES are the packages whose types get OpenAPI definitions: every
# served group version, the groups we expect to serve next, and the
# apimachinery packages their types refer to. Types referred to from a listed
# package must come from a listed package too (batch/v1 refers to
# scheduling/v1alpha3), or the spec would hold dangling references;
# api/openapi's tests catch that.
OPENAPI_PACKAGES=(
  k8s.io/api/admissionregistration/v1
  k8s.io/api/apps/v1
  k8s.io/api/authentication/v1
  k8s.io/api/authorization/v1
  k8s.io/api/autoscaling/v1
  k8s.io/api/autoscaling/v2
  k8s.io/api/batch/v1
  k8s.io/api/certificates/v1
  k8s.io/api/coordination/v1
  k8s.io/api/core/v1
  k8s.io/api/discovery/v1
  k8s.io/api/events/v1
  k8s.io/api/flowcontrol/v1
  k8s.io/api/networking/v1
  k8s.io/api/node/v1
  k8s.io/api/policy/v1
  k8s.io/api/rbac/v1
  k8s.io/api/resource/v1
  k8s.io/api/scheduling/v1
  k8s.io/api/scheduling/v1alpha3
  k8s.io/api/storage/v1
  k8s.io/apimachinery/pkg/api/resource
  k8s.io/apimachinery/pkg/apis/meta/v1
  k8s.io/apimachinery/pkg/runtime
  k8s.io/apimachinery/pkg/util/intstr
  k8s.io/apimachinery/pkg/version
)

# gen::openapi writes api/openapi/zz_generated.openapi.go and the list of API
# rule violations found in those types (upstream's own; we cannot fix them,
# but a new entry after a k8s.io/api bump is worth a look).
gen::openapi() {
  local bin out="${OUTPUT_ROOT}/api/openapi"
  bin="$(tool::build k8s.io/kube-openapi/cmd/openapi-gen)"
  mkdir -p "${out}"
  # Run inside api/ so that go/packages resolves k8s.io/api at the version
  # api/go.mod requires. No --go-header-file: a header with the year in it
  # would make the output change every January.
  (cd "${REPO_ROOT}/api" && GOWORK=off GOFLAGS="${READONLY_GOFLAGS}" "${bin}" \
    --output-dir "${out}" \
    --output-pkg trireme.dev/api/openapi \
    --output-file zz_generated.openapi.go \
    --report-filename "${out}/violation_exceptions.list" \
    "${OPENAPI_PACKAGES[@]}")
}

GENERATORS=(openapi)

for g in "${GENERATORS[@]}"; do
  start=${SECONDS}
  "gen::${g}"
  echo "generated ${g} in $((SECONDS - start))s" >&2
done
