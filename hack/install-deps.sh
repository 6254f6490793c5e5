#!/usr/bin/env bash
# install-deps.sh installs the Debian packages Trireme's build, tests and
# clusters use, skipping what is already there. Idempotent; needs root.
set -euo pipefail

packages=(
	ca-certificates git make      # build
	busybox-static                # the busybox test image
	gcc libc6-dev patch bzip2 xz-utils  # conformance's busybox, built from Debian's source package
	containerd runc containernetworking-plugins  # the container runtime the kubelet drives
	iptables nftables conntrack iproute2         # service rules and test "nodes"
	curl                          # e2e/cluster: a client machine outside the cluster
	chromium                      # e2e/dashboard drives the console in headless Chromium
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} > 0)); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "install-deps: need root to install: ${missing[*]}" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# No init system starts services here; tests start what they use.
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v go >/dev/null || { echo "install-deps: Go 1.26 is required (https://go.dev/dl)" >&2; exit 1; }
command -v kubectl >/dev/null || echo "install-deps: warning: kubectl is not on PATH; the e2e suites need it" >&2
echo "install-deps: ok"
