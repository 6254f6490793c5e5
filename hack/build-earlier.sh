#!/usr/bin/env bash
# Builds the binaries and images of an earlier commit of this repository into
# _output/earlier/<commit>/{bin,images}, for e2e/faults' upgrade test (the
# cluster is installed with them, then upgraded to this build), and prints
# the bin directory:
#
#   TRIREME_E2E_UPGRADE_FROM=$(hack/build-earlier.sh HEAD~20) make e2e-faults
#
# The commit (default HEAD~20) is checked out in a throw-away worktree and
# built with its own Makefile; an earlier build of the same commit is reused.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
commit=$(git -C "$REPO_ROOT" rev-parse --short "${1:-HEAD~20}^{commit}")
out=$REPO_ROOT/_output/earlier/$commit
if [[ -x $out/bin/triremeadm && -f $out/images/trireme-apiserver.tar ]]; then
	echo "$out/bin"
	exit 0
fi
tree=$(mktemp -d /tmp/trireme-earlier-XXXXXX)
trap 'git -C "$REPO_ROOT" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git -C "$REPO_ROOT" worktree add --detach "$tree" "$commit" >&2
echo "build-earlier: building $commit's binaries and images" >&2
make -C "$tree" build images >&2
rm -rf "$out"
mkdir -p "$out"
mv "$tree/_output/bin" "$tree/_output/images" "$out/"
echo "$out/bin"
