#!/usr/bin/env bash
# Repairs what hack/verify.sh can repair mechanically: formats every Go file,
# regenerates generated code, and tidies every go.mod (hack/tools included).
# Regeneration comes before tidying because new generated imports change
# what go.mod must require.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
cd "${REPO_ROOT}"

mapfile -t files < <(trireme::go_files)
if [[ ${#files[@]} -gt 0 ]]; then
  gofmt -w "${files[@]}"
fi
echo "formatted ${#files[@]} Go files"

"${REPO_ROOT}/hack/update-codegen.sh"

# Each module is tidied alone, as it is built when released; -mod=mod lets
# tidy use the module cache and the proxy rather than insisting on a
# complete go.sum first.
for dir in $(trireme::all_modules); do
  (cd "${dir}" && GOWORK=off GOFLAGS="${GOFLAGS:+${GOFLAGS} }-mod=mod" go mod tidy $(trireme::tidy_flags "${dir}"))
  echo "tidied ${dir}/go.mod"
done
