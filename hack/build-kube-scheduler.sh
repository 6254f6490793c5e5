#!/usr/bin/env bash
# Builds upstream's kube-scheduler, at the version of this repository's
# Kubernetes libraries, into _output/upstream/kube-scheduler, so that the
# schedload harness can measure it on the same work as trireme-scheduler:
#
#   hack/build-kube-scheduler.sh
#   SCHEDLOAD_SCHEDULER=$PWD/_output/upstream/kube-scheduler SCHEDLOAD_BACKLOG=1 \
#     ./e2e/bench/run-schedload.sh
#
# The binary is built in a throw-away module outside the repository (the
# k8s.io/kubernetes module points its staging modules at local directories,
# so `go install` refuses it); nothing of it is imported by Trireme.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
minor=$(awk '$1 == "k8s.io/client-go" { print $2; exit }' "$repo/scheduler/go.mod")
version=v1${minor#v0}
out=$repo/_output/upstream
work=$(mktemp -d "${TMPDIR:-/tmp}/kube-scheduler-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

echo "build-kube-scheduler: k8s.io/kubernetes $version"
cd "$work"
GOFLAGS=-mod=mod GOWORK=off go mod download -json "k8s.io/kubernetes@$version" >mod.json
dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' mod.json)
{
	printf 'module kubeschedulerbuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$version"
	# Each staging module at the published version of the same release.
	awk '/=> \.\/staging/ { printf "\t%s => %s %s\n", $1, $1, "'"${minor}"'" }' "$dir/go.mod"
	printf ')\n'
} >go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-scheduler"\n' >tools.go
GOFLAGS=-mod=mod GOWORK=off go mod tidy
GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$version" \
	-o "$out/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler
"$out/kube-scheduler" --version
