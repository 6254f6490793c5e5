# shellcheck shell=bash
# Root filesystems for test images from Debian packages, without Docker or a
# registry: the packages and their dependencies are fetched with
# `apt-get download` from the machine's apt sources and unpacked with
# `dpkg -x` (no maintainer scripts run). Source hack/lib/init.sh first.

# trireme::debroot <dir> <cache> <package>... unpacks into <dir> (emptied
# first) every <package> with the closure of its Depends and Pre-Depends
# (alternatives included, so it may hold more than strictly needed), and
# writes the dynamic loader's cache, so that binaries find libraries as on
# Debian. Downloaded .debs are kept in <cache> and reused.
trireme::debroot() {
  local dir="$1" cache="$2" p f
  shift 2
  local closure=() missing=()
  # Essential packages are no one's dependency: libc-bin brings ldconfig's
  # configuration and getent.
  mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests \
    --no-conflicts --no-breaks --no-replaces --no-enhances libc-bin "$@" |
    awk '/^[a-z0-9]/ { print $1 }' | LC_ALL=C sort -u)
  mkdir -p "${cache}"
  for p in "${closure[@]}"; do
    compgen -G "${cache}/${p}_*.deb" >/dev/null || missing+=("${p}")
  done
  if ((${#missing[@]} > 0)); then
    (cd "${cache}" && apt-get download -q -o APT::Sandbox::User=root "${missing[@]}") >/dev/null ||
      { echo "apt-get download ${missing[*]} failed (apt-get update?)" >&2; return 1; }
  fi
  rm -rf "${dir}"
  mkdir -p "${dir}"
  for p in "${closure[@]}"; do
    for f in "${cache}/${p}"_*.deb; do
      dpkg -x "${f}" "${dir}"
    done
  done
  ldconfig -r "${dir}"
}

# trireme::debunpack <dir> <cache> <package>... unpacks just the named
# packages into <dir> (left as it is), without their dependencies: for
# static binaries such as bash-static. Downloaded .debs are kept in <cache>.
trireme::debunpack() {
  local dir="$1" cache="$2" p f
  shift 2
  local missing=()
  mkdir -p "${cache}" "${dir}"
  for p in "$@"; do
    compgen -G "${cache}/${p}_*.deb" >/dev/null || missing+=("${p}")
  done
  if ((${#missing[@]} > 0)); then
    (cd "${cache}" && apt-get download -q -o APT::Sandbox::User=root "${missing[@]}") >/dev/null ||
      { echo "apt-get download ${missing[*]} failed (apt-get update?)" >&2; return 1; }
  fi
  for p in "$@"; do
    for f in "${cache}/${p}"_*.deb; do
      dpkg -x "${f}" "${dir}"
    done
  done
}

# trireme::busybox_into <dir> [busybox] puts a static busybox (default
# /bin/busybox, Debian's busybox-static) at <dir>/bin/busybox and links every
# applet it lists to it where <dir> has no program of that name, so an image
# has the usual tools besides what its packages bring. Debian's busybox
# shell runs its applets before the PATH's programs: an image with other
# tools of the same names needs another /bin/sh (dash) laid out first.
trireme::busybox_into() {
  local dir="$1" bb="${2:-/bin/busybox}" a
  [[ -x "${bb}" ]] || { echo "${bb} missing: apt-get install -y busybox-static" >&2; return 1; }
  mkdir -p "${dir}/bin"
  cp "${bb}" "${dir}/bin/busybox"
  chmod 0755 "${dir}/bin/busybox"
  local d taken
  while IFS= read -r a; do
    # A package's program of that name anywhere on the PATH wins: busybox's
    # /usr/bin/nc would otherwise shadow netcat's /bin/nc.
    taken=0
    for d in bin sbin usr/bin usr/sbin usr/local/bin usr/local/sbin; do
      [[ -e "${dir}/${d}/${a##*/}" || -L "${dir}/${d}/${a##*/}" ]] && taken=1
    done
    ((taken == 0)) || continue
    mkdir -p "$(dirname "${dir}/${a}")"
    ln -s /bin/busybox "${dir}/${a}"
  done < <("${dir}/bin/busybox" --list-full)
}

# trireme::debsource <cache> <source package> downloads a Debian source
# package (its .dsc, upstream tarball and debian tarball) into
# <cache>/src/<package> unless there already, and prints that directory. The
# machine's apt sources list binary packages only: the deb-src entries are
# made from them, in a list directory of its own, so apt's own stays as it is.
trireme::debsource() {
  local cache="$1" pkg="$2"
  local dir="${cache}/src/${pkg}" tmp f
  if ! compgen -G "${dir}/${pkg}_*.dsc" >/dev/null; then
    tmp="$(mktemp -d)"
    mkdir -p "${tmp}/parts" "${tmp}/lists/partial" "${dir}"
    for f in /etc/apt/sources.list.d/*.sources; do
      [[ -f "${f}" ]] && sed 's/^Types: deb$/Types: deb-src/' "${f}" >"${tmp}/parts/$(basename "${f}")"
    done
    if [[ -f /etc/apt/sources.list ]]; then
      sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"${tmp}/parts/sources.list.list"
    fi
    local apt=(apt-get -q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=${tmp}/parts"
      -o "Dir::State::Lists=${tmp}/lists" -o APT::Sandbox::User=root)
    if ! { "${apt[@]}" update && (cd "${dir}" && "${apt[@]}" source --download-only "${pkg}"); } >/dev/null; then
      rm -rf "${tmp}"
      echo "apt-get source --download-only ${pkg} failed (deb-src of the machine's apt sources)" >&2
      return 1
    fi
    rm -rf "${tmp}"
  fi
  echo "${dir}"
}
