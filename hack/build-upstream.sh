#!/usr/bin/env bash
# Builds upstream's components, at the version of this repository's
# Kubernetes libraries, into _output/upstream/, so that the load harnesses
# can measure them on the same work as Trireme's:
#
#   hack/build-upstream.sh kube-scheduler
#   SCHEDLOAD_SCHEDULER=$PWD/_output/upstream/kube-scheduler SCHEDLOAD_BACKLOG=1 \
#     ./e2e/bench/run-schedload.sh
#
#   hack/build-upstream.sh kube-apiserver
#   APILOAD_UPSTREAM=$PWD/_output/upstream/kube-apiserver ./e2e/bench/run-apiload.sh
#
# With no argument it builds kube-scheduler. The binaries are built in a
# throw-away module outside the repository (the k8s.io/kubernetes module
# points its staging modules at local directories, so `go install` refuses
# it); nothing of them is imported by Trireme.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/upstream.sh"
repo=$REPO_ROOT
components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(kube-scheduler)
for c in "${components[@]}"; do
	case $c in
	kube-scheduler | kube-apiserver | kube-controller-manager | kubelet | kube-proxy) ;;
	*)
		echo "build-upstream: unknown component $c" >&2
		exit 2
		;;
	esac
done
version=$(trireme::upstream_version)
out=$repo/_output/upstream
work=$(mktemp -d "${TMPDIR:-/tmp}/upstream-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

echo "build-upstream: k8s.io/kubernetes $version: ${components[*]}"
pkgs=()
for c in "${components[@]}"; do
	pkgs+=("k8s.io/kubernetes/cmd/$c")
done
trireme::upstream_module "$work" "$version" "${pkgs[@]}"
cd "$work"
for c in "${components[@]}"; do
	GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version" \
		-o "$out/$c" "k8s.io/kubernetes/cmd/$c"
	"$out/$c" --version
done
