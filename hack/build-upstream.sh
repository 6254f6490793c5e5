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

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
minor=$(awk '$1 == "k8s.io/client-go" { print $2; exit }' "$repo/scheduler/go.mod")
version=v1${minor#v0}
out=$repo/_output/upstream
work=$(mktemp -d "${TMPDIR:-/tmp}/upstream-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

echo "build-upstream: k8s.io/kubernetes $version: ${components[*]}"
cd "$work"
GOFLAGS=-mod=mod GOWORK=off go mod download -json "k8s.io/kubernetes@$version" >mod.json
dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' mod.json)
{
	printf 'module upstreambuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$version"
	# Each staging module at the published version of the same release.
	awk '/=> \.\/staging/ { printf "\t%s => %s %s\n", $1, $1, "'"${minor}"'" }' "$dir/go.mod"
	printf ')\n'
} >go.mod
{
	printf '//go:build tools\n\npackage tools\n\nimport (\n'
	for c in "${components[@]}"; do
		printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"
	done
	printf ')\n'
} >tools.go
GOFLAGS=-mod=mod GOWORK=off go mod tidy
for c in "${components[@]}"; do
	GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version" \
		-o "$out/$c" "k8s.io/kubernetes/cmd/$c"
	"$out/$c" --version
done
