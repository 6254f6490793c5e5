# shellcheck shell=bash
# Helpers for building upstream Kubernetes code (k8s.io/kubernetes and its
# staging modules) outside Trireme's modules. Source hack/lib/init.sh first.
#
# k8s.io/kubernetes points its staging modules (k8s.io/api, client-go, ...)
# at local directories, so `go install k8s.io/kubernetes/...@v` refuses it.
# trireme::upstream_module writes a throw-away module that requires it with
# every staging module at the published version of the same release; packages
# are then built from that module with GOWORK=off. Nothing of upstream's is
# imported by Trireme's own modules.

# trireme::upstream_version prints the k8s.io/kubernetes release matching the
# repository's Kubernetes libraries: client-go v0.X.Y is Kubernetes v1.X.Y.
trireme::upstream_version() {
  local minor
  minor="$(awk '$1 == "k8s.io/client-go" { print $2; exit }' "${REPO_ROOT}/scheduler/go.mod")"
  [[ -n "${minor}" ]] || { echo "no k8s.io/client-go in scheduler/go.mod" >&2; return 1; }
  echo "v1${minor#v0}"
}

# trireme::module_dir <module> <version> prints the module cache directory of
# <module>@<version>, downloading it (through GOPROXY) if needed.
trireme::module_dir() {
  (cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod GOWORK=off go mod download -json "$1@$2") |
    sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

# trireme::upstream_dir <version> prints the module cache directory of
# k8s.io/kubernetes@<version>.
trireme::upstream_dir() {
  trireme::module_dir k8s.io/kubernetes "$1"
}

# trireme::upstream_module <dir> <version> <package>... writes in <dir> (which
# must exist) a module "upstreambuild" requiring k8s.io/kubernetes@<version>,
# with a tools.go that imports every <package> (from k8s.io/kubernetes or
# from any module it or they require), and runs go mod tidy, which pins the
# packages' modules at the versions k8s.io/kubernetes's graph selects. Build
# from <dir> with GOWORK=off afterwards.
trireme::upstream_module() {
  local dir="$1" version="$2" kdir minor p
  shift 2
  minor="v0${version#v1}"
  kdir="$(trireme::upstream_dir "${version}")"
  [[ -n "${kdir}" && -f "${kdir}/go.mod" ]] || { echo "cannot download k8s.io/kubernetes@${version}" >&2; return 1; }
  {
    printf 'module upstreambuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "${version}"
    # Each staging module at the published version of the same release.
    awk -v minor="${minor}" '/=> \.\/staging/ { printf "\t%s => %s %s\n", $1, $1, minor }' "${kdir}/go.mod"
    printf ')\n'
  } >"${dir}/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for p in "$@"; do
      printf '\t_ "%s"\n' "${p}"
    done
    printf ')\n'
  } >"${dir}/tools.go"
  (cd "${dir}" && GOFLAGS=-mod=mod GOWORK=off go mod tidy)
}

# trireme::suite_steps <prefix> [step] runs one step of a conformance suite's
# script, <prefix>::build, ::images, ::check or ::run, or all four in turn
# for "all" (the default). The script's own die reports a wrong step.
trireme::suite_steps() {
  local prefix="$1" step="${2:-all}" s
  case "${step}" in
  build | images | check | run) "${prefix}::${step}" ;;
  all) for s in build images check run; do "${prefix}::${s}"; done ;;
  *) die "unknown step ${step}: want all, build, images, check or run" ;;
  esac
}
