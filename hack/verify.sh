#!/usr/bin/env bash
# Checks what reviewers should not have to: formatting, vet, staticcheck,
# generated code, and the module graph rules of DESIGN.md. Every check runs
# even after one fails; each prints "ok: <check>" or "FAIL: <check>" with the
# details, and the script exits non-zero if any failed. hack/fix.sh repairs
# formatting, generated code and untidy go.mod files.
#
# Usage: hack/verify.sh [check...]   (default: all; names as printed)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
cd "${REPO_ROOT}"

# API_MODULE is the module every component imports for types; BASE_MODULE
# holds the plumbing components share (logging, memory trimming). These two
# are the only Trireme modules a component may import.
API_MODULE=trireme.dev/api
BASE_MODULE=trireme.dev/componentbase
# CHARTS_MODULE embeds the Helm charts (data, no logic): triremeadm installs
# the addons chart from it.
CHARTS_MODULE=trireme.dev/charts
# API_ALLOWED_REQUIRES are the only direct requirements api/go.mod may have:
# clients of the api module must not inherit anything else.
API_ALLOWED_REQUIRES=(k8s.io/api k8s.io/apimachinery k8s.io/kube-openapi k8s.io/utils k8s.io/component-base k8s.io/kubelet k8s.io/kube-proxy k8s.io/kube-scheduler)

failed=()

# report runs check function $2 named $1, capturing its output so that the
# result reads as one line on success. The check runs in a subshell where
# errexit does not apply (it is a condition), so checks test every command
# whose failure matters themselves.
report() {
  local name="$1" fn="$2" out
  if out="$("${fn}" 2>&1)"; then
    echo "ok: ${name}"
  else
    echo "FAIL: ${name}"
    [[ -n "${out}" ]] && sed 's/^/    /' <<<"${out}"
    failed+=("${name}")
  fi
}

check::gofmt() {
  local files bad
  mapfile -t files < <(trireme::go_files)
  [[ ${#files[@]} -eq 0 ]] && return 0
  if ! bad="$(gofmt -l "${files[@]}" 2>&1)"; then
    echo "${bad}"
    return 1
  fi
  if [[ -n "${bad}" ]]; then
    echo "not gofmt-ed (run hack/fix.sh):"
    echo "${bad}"
    return 1
  fi
}

check::vet() {
  local dir rc=0
  for dir in $(trireme::workspace_modules); do
    if ! trireme::has_go_files "${dir}"; then
      continue
    fi
    # -trimpath: the results cached under Go's build cache then hold for
    # any checkout of the same code, as CI's fresh clone.
    if ! (cd "${dir}" && go vet -trimpath ./...); then
      echo "go vet failed in ${dir}"
      rc=1
    fi
  done
  return "${rc}"
}

check::staticcheck() {
  local bin dir patterns=()
  bin="$(trireme::build_tool honnef.co/go/tools/cmd/staticcheck)" || return 1
  for dir in $(trireme::workspace_modules); do
    trireme::has_go_files "${dir}" && patterns+=("./${dir}/...")
  done
  # One run over every module, from the workspace root, loads and analyses
  # the k8s.io packages they share once and prints paths from the root.
  # Test files are checked too (-tests defaults to true); staticcheck.conf
  # says which checks run. -trimpath, as for vet: its cache then holds for
  # any checkout of the same code.
  GOFLAGS="${GOFLAGS:-} -trimpath" "${bin}" "${patterns[@]}"
}

check::generated() {
  local tmp out rc=0 f
  tmp="$(mktemp -d)"
  # Generating into a scratch directory leaves the tree untouched whatever
  # the outcome.
  trap "rm -rf '${tmp}'" EXIT
  if ! out="$("${REPO_ROOT}/hack/update-codegen.sh" --output-root "${tmp}" 2>&1)"; then
    echo "hack/update-codegen.sh failed:"
    echo "${out}"
    return 1
  fi
  while IFS= read -r f; do
    f="${f#"${tmp}"/}"
    if [[ ! -f "${f}" ]]; then
      echo "${f} is missing (run hack/update-codegen.sh)"
      rc=1
    elif ! cmp -s "${tmp}/${f}" "${f}"; then
      echo "${f} is out of date (run hack/update-codegen.sh):"
      diff -u "${f}" "${tmp}/${f}" | head -n 20 || true
      rc=1
    fi
  done < <(find "${tmp}" -type f | LC_ALL=C sort)
  return "${rc}"
}

check::k8s_versions() {
  local dir reqs="" r bad
  for dir in $(trireme::all_modules); do
    r="$(trireme::requires "${dir}")" || { echo "cannot read ${dir}/go.mod"; return 1; }
    reqs+="${r}"$'\n'
  done
  # Every k8s.io and sigs.k8s.io module required at more than one version is
  # reported once per version with the go.mod files that ask for it, so the
  # odd one out is easy to spot.
  bad="$(awk '$1 ~ /^(k8s\.io|sigs\.k8s\.io)\// {
      key = $1 " " $2
      if (!(key in where)) count[$1]++
      where[key] = where[key] " " $3
    }
    END {
      for (key in where) {
        split(key, p, " ")
        if (count[p[1]] > 1) print p[1], p[2], "in" where[key]
      }
    }' <<<"${reqs}" | LC_ALL=C sort)"
  if [[ -n "${bad}" ]]; then
    echo "modules required at different versions:"
    echo "${bad}"
    return 1
  fi
}

check::api_replace() {
  local dir rc=0 shared target
  for dir in $(trireme::workspace_modules); do
    for shared in "${API_MODULE}" "${BASE_MODULE}"; do
      [[ "$(trireme::module_path "${dir}")" == "${shared}" ]] && continue
      target="../${shared#trireme.dev/}"
      # A module that requires a shared one replaces it with its directory,
      # so that tidy works offline and every build sees the same code.
      (cd "${dir}" && GOWORK=off go mod edit -print) |
        grep -q "^[[:space:]]*\(require \)\?${shared} " || continue
      if ! (cd "${dir}" && GOWORK=off go mod edit -print) |
        awk -v mod="${shared}" -v target="${target}" '
          /^replace \($/ { block = 1; next }
          /^\)$/ { block = 0; next }
          (block && $1 == mod && $2 == "=>" && $3 == target) ||
            ($1 == "replace" && $2 == mod && $3 == "=>" && $4 == target) { found = 1 }
          END { exit !found }'; then
        echo "${dir}/go.mod lacks: replace ${shared} => ${target}"
        rc=1
      fi
    done
  done
  return "${rc}"
}

check::imports() {
  local dir mod rc=0 deps bad allowed req
  for dir in $(trireme::workspace_modules); do
    trireme::has_go_files "${dir}" || continue
    mod="$(trireme::module_path "${dir}")"
    if ! deps="$(cd "${dir}" && go list -deps -test -f '{{if .Module}}{{.Module.Path}}{{end}} {{.ImportPath}}' ./...)"; then
      echo "go list failed in ${dir}"
      rc=1
      continue
    fi
    # Packages of this module, its tests included, may reach trireme.dev
    # code only in their own module, the api module, the base module and the
    # embedded charts.
    bad="$(awk -v self="${mod}" -v api="${API_MODULE}" -v base="${BASE_MODULE}" -v charts="${CHARTS_MODULE}" '
        $1 ~ /^trireme\.dev\// && $1 != self && $1 != api && $1 != base && $1 != charts { print "    " $2 }' <<<"${deps}" | LC_ALL=C sort -u)"
    if [[ -n "${bad}" ]]; then
      echo "${mod} imports other components' packages:"
      echo "${bad}"
      rc=1
    fi
  done
  # The api module is imported by everything: its direct requirements are
  # held to a short list so components do not inherit stray dependencies.
  allowed=" ${API_ALLOWED_REQUIRES[*]} "
  for req in $(cd api && GOWORK=off go mod edit -print | awk '
      /^require \($/ { block = 1; next }
      /^\)$/ { block = 0; next }
      block && $3 != "//" { print $1 }
      $1 == "require" && $2 != "(" && $4 != "//" { print $2 }'); do
    if [[ "${allowed}" != *" ${req} "* ]]; then
      echo "api/go.mod requires ${req} directly; only ${API_ALLOWED_REQUIRES[*]} are allowed"
      rc=1
    fi
  done
  return "${rc}"
}

check::tidy() {
  local dir rc=0
  for dir in $(trireme::all_modules); do
    if ! (cd "${dir}" && GOWORK=off go mod tidy $(trireme::tidy_flags "${dir}") -diff >/dev/null 2>&1); then
      echo "${dir}/go.mod or go.sum is not tidy (run hack/fix.sh)"
      rc=1
    fi
  done
  return "${rc}"
}

CHECKS=(gofmt vet staticcheck generated k8s_versions api_replace imports tidy)
declare -A DESCRIPTIONS=(
  [gofmt]="gofmt"
  [vet]="go vet"
  [staticcheck]="staticcheck"
  [generated]="generated code up to date"
  [k8s_versions]="one version of each k8s.io and sigs.k8s.io module"
  [api_replace]="components replace ${API_MODULE} (and ${BASE_MODULE}) with their directories"
  [imports]="components import only their own packages, ${API_MODULE} and ${BASE_MODULE}"
  [tidy]="go.mod files tidy"
)

selected=("$@")
[[ ${#selected[@]} -eq 0 ]] && selected=("${CHECKS[@]}")
for c in "${selected[@]}"; do
  if [[ -z "${DESCRIPTIONS[${c}]+set}" ]]; then
    echo "unknown check ${c}; known: ${CHECKS[*]}" >&2
    exit 2
  fi
  report "${DESCRIPTIONS[${c}]}" "check::${c}"
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "verify failed: ${#failed[@]} check(s)" >&2
  exit 1
fi
