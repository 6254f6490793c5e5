# Shared helpers for the hack/ scripts. Source it; it sets REPO_ROOT and
# defines functions whose names start with trireme:: so they cannot clash
# with a caller's own.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly REPO_ROOT

# trireme::go_files prints every Go source file of the repository, relative to
# REPO_ROOT. Build output, vendored code and testdata (golden files may be
# deliberately malformed) are left out.
trireme::go_files() {
  (cd "${REPO_ROOT}" && find . \
    \( -path ./.git -o -path ./_output -o -name vendor -o -name testdata \) -prune \
    -o -type f -name '*.go' -print | sed 's|^\./||' | LC_ALL=C sort)
}

# trireme::all_modules prints the directory (relative to REPO_ROOT) of every
# go.mod in the repository, including modules outside go.work such as
# hack/tools.
trireme::all_modules() {
  (cd "${REPO_ROOT}" && find . \
    \( -path ./.git -o -path ./_output -o -name vendor -o -name testdata \) -prune \
    -o -type f -name go.mod -print | sed 's|^\./||; s|/\{0,1\}go\.mod$||; s|^$|.|' | LC_ALL=C sort)
}

# trireme::tidy_flags prints the flags `go mod tidy` takes in module <dir>.
# Tidy reads every package a module's imports could reach under any build
# tag: Traefik's (images/traefik) reaches lego's DNS-01 providers, whose
# cloud SDKs the module proxy does not serve, though the build leaves them
# out (tag lego_dnslight). There -e lets tidy note what it cannot download
# and go on; the build checks that nothing it compiles is missing.
trireme::tidy_flags() {
  case "$1" in
    images/traefik) printf '%s\n' -e ;;
  esac
}

# trireme::workspace_modules prints the directories listed by go.work's use
# directives, relative to REPO_ROOT and without a leading "./".
trireme::workspace_modules() {
  (cd "${REPO_ROOT}" && go work edit -json |
    sed -n 's|^[[:space:]]*"DiskPath": "\(.*\)",\{0,1\}$|\1|p' | sed 's|^\./||; s|^$|.|')
}

# trireme::module_path prints the module path declared by <dir>/go.mod.
trireme::module_path() {
  (cd "${REPO_ROOT}/$1" && GOWORK=off go mod edit -print | awk '$1 == "module" { print $2; exit }')
}

# trireme::has_go_files succeeds when module directory <dir> holds at least
# one Go file of its own (not one of a nested module), so that commands like
# `go vet ./...` have packages to work on.
trireme::has_go_files() {
  local dir="${REPO_ROOT}/$1" f d
  while IFS= read -r f; do
    d="$(dirname "${f}")"
    # A file belongs to this module unless a go.mod sits between it and dir.
    while [[ "${d}" != "${dir}" && ! -f "${d}/go.mod" ]]; do d="$(dirname "${d}")"; done
    [[ "${d}" == "${dir}" ]] && return 0
  done < <(find "${dir}" \( -name testdata -o -name vendor \) -prune -o -type f -name '*.go' -print)
  return 1
}

# trireme::requires prints "<module> <version> <go.mod path>" for every
# require of <dir>/go.mod, with a replace directive that pins another
# version of the same module taking effect, as the go command applies it.
trireme::requires() {
  local dir="$1"
  (cd "${REPO_ROOT}/${dir}" && GOWORK=off go mod edit -print) | awk -v gomod="${dir}/go.mod" '
    # go mod edit -print writes the canonical form: one directive per line,
    # blocks opened by "require (" / "replace (" and closed by ")".
    /^require \($/ { block = "require"; next }
    /^replace \($/ { block = "replace"; next }
    /^\)$/ { block = ""; next }
    $1 == "require" && $2 != "(" { req[$2] = $3; next }
    $1 == "replace" && $2 != "(" { sub(/^replace /, ""); addrep($0); next }
    block == "require" { req[$1] = $2; next }
    block == "replace" { addrep($0); next }
    function addrep(line,   f, n) {
      n = split(line, f, " ")
      # "old [v] => new v" pins a version; "old [v] => ./path" has none.
      if (f[n - 1] != "=>") rep[f[1]] = f[n]
      else rep[f[1]] = "(replaced by " f[n] ")"
    }
    END {
      for (m in req) print m, ((m in rep) ? rep[m] : req[m]), gomod
    }' | LC_ALL=C sort
}

# trireme::build_tool builds a tool pinned by hack/tools/go.mod's tool
# directives into hack/tools/bin and prints its path. The build cache makes
# repeat builds cheap; building from hack/tools keeps the tools' dependencies
# out of every shipped module's go.mod, and -mod=readonly keeps the build from
# rewriting hack/tools/go.mod whatever the caller's GOFLAGS say.
trireme::build_tool() {
  local pkg="$1" dir="${REPO_ROOT}/hack/tools" name
  name="$(basename "${pkg}")"
  GOWORK=off GOFLAGS="${GOFLAGS:+${GOFLAGS} }-mod=readonly" \
    go -C "${dir}" build -o "${dir}/bin/${name}" "${pkg}" || return 1
  echo "${dir}/bin/${name}"
}
