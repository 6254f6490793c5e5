#!/usr/bin/env bash
# Builds kwok (sigs.k8s.io/kwok), which fakes nodes and their pods for the
# scale harness (e2e/scale) and the dashboard's benchmark (e2e/dashboard),
# from its Go module into _output/bin/kwok. It is never downloaded as a
# binary. The build happens in a throw-away module
# outside the repository: kwok pins its own Kubernetes libraries, which
# differ from Trireme's, so it cannot live in go.work or in a module that
# hack/verify.sh k8s_versions holds to Trireme's versions.
#
#   hack/build-kwok.sh            # KWOK_VERSION, v0.8.0 by default
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
version=${KWOK_VERSION:-v0.8.0}
out=$REPO_ROOT/_output/bin
work=$(mktemp -d "${TMPDIR:-/tmp}/kwok-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

echo "build-kwok: sigs.k8s.io/kwok $version"
cd "$work"
printf 'module kwokbuild\n\ngo 1.26.0\n\nrequire sigs.k8s.io/kwok %s\n' "$version" >go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/kwok/cmd/kwok"\n' >tools.go
# kwok's own go.mod pins its dependencies; tidy keeps them at those versions.
GOFLAGS=-mod=mod GOWORK=off go mod tidy
GOWORK=off CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${version#v}" \
	-o "$out/kwok" sigs.k8s.io/kwok/cmd/kwok
"$out/kwok" --version
# kwok's own stages for nodes (initialize, heartbeat with a Lease) and pods
# (ready, complete, delete), the set kwokctl runs by default, for kwok's
# --config.
stages=$(GOWORK=off go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
	pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
	printf -- '---\n'
	cat "$stages/$f"
done >"$out/kwok-stages.yaml"
