#!/usr/bin/env bash
# netfilter.sh DIR: lays out in DIR the host's nft, iptables (the nft-backed
# xtables-nft-multi, with every iptables/ip6tables name linked to it and
# its dlopen()ed extensions) and conntrack, with the shared libraries and
# dynamic loader they need, so that an image on an otherwise empty base
# (trireme-proxy's, flannel's, trireme-netpol's) can run the same tools the
# host runs. The binaries come from Debian's nftables, iptables and conntrack
# packages (hack/install-deps.sh).
set -euo pipefail

out="$1"
rm -rf "${out}"
mkdir -p "${out}"

bins=(/usr/sbin/nft /usr/sbin/xtables-nft-multi /usr/sbin/conntrack)
for b in "${bins[@]}"; do
  if [[ ! -x "${b}" ]]; then
    echo "${b} missing: apt-get install -y nftables iptables conntrack" >&2
    exit 1
  fi
done

# copy puts host file $1 at the same path under $out, following symlinks
# (Debian keeps libraries under /lib, a symlink to /usr/lib).
copy() {
  local src="$1" dst="${out}$1"
  mkdir -p "$(dirname "${dst}")"
  cp -L --preserve=mode "${src}" "${dst}"
}

xtables_dir="$(dirname "$(readlink -f "$(ldd /usr/sbin/xtables-nft-multi | awk '/libxtables/ {print $3}')")")/xtables"
libs=()
for f in "${bins[@]}" "${xtables_dir}"/*.so; do
  copy "${f}"
  while read -r lib; do
    libs+=("${lib}")
  done < <(ldd "${f}" | awk '/=>/ && $3 ~ /^\// {print $3} /^\t\/.*ld-linux/ {print $1}')
done
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
  copy "${lib}"
done

for name in iptables iptables-restore iptables-save ip6tables ip6tables-restore ip6tables-save; do
  ln -s xtables-nft-multi "${out}/usr/sbin/${name}"
done
# iptables -w takes its lock here; a DaemonSet mounts the host's file over it.
mkdir -p "${out}/run" "${out}/etc"
for f in /etc/protocols /etc/services; do
  [[ -f "${f}" ]] && copy "${f}"
done
