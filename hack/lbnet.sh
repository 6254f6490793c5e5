#!/usr/bin/env bash
# lbnet.sh up|down: make up's network for LoadBalancer Services. `up` makes
# the bridge trireme-lb0 holding the first address of a private /28
# (UP_LB_CIDR, default 172.29.254.0/28) and writes a cloud config whose
# default pool is the rest of it, for `triremeadm init --cloud-provider
# external`; the nodes' announcers put the addresses on trireme-lb0 (the
# interface of their network), so the host reaches them and nothing is
# announced on the machine's real LAN. `down` removes both (the cloud config
# only if this script wrote it). UP_ROOT as in up.sh.
set -euo pipefail

BRIDGE=trireme-lb0
CIDR=${UP_LB_CIDR:-172.29.254.0/28}
CONFIG=${UP_ROOT:-}/etc/trireme/cloud/cloud-config.yaml
MARK="# Written by hack/lbnet.sh (make up); make down removes it."

# first and last address of a /28 given as a.b.c.d/28, and the host's (.1).
addrs() {
	local base=${CIDR%/*} len=${CIDR#*/}
	if [[ $len != 28 ]] || ! [[ $base =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
		echo "lbnet: UP_LB_CIDR must be an IPv4 /28, not '$CIDR'" >&2
		exit 1
	fi
	local d=${BASH_REMATCH[4]}
	if ((d % 16 != 0)); then
		echo "lbnet: UP_LB_CIDR $CIDR: host bits set" >&2
		exit 1
	fi
	local p="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.${BASH_REMATCH[3]}"
	HOST="$p.$((d + 1))"
	FIRST="$p.$((d + 2))"
	LAST="$p.$((d + 14))"
}

case ${1:-} in
up)
	addrs
	if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
		# Never a network the machine already reaches: a route that covers
		# the range (other than the default) means it is someone's.
		if routes=$(ip -4 route show to match "$HOST" | grep -v '^default'); [[ -n $routes ]]; then
			echo "lbnet: $CIDR overlaps a network of this machine ($routes); set UP_LB_CIDR to a free private /28" >&2
			exit 1
		fi
		ip link add "$BRIDGE" type bridge
		# A port gives the bridge a carrier, so that its network's route
		# is not marked linkdown; without the dummy module it works anyway.
		if ip link add "$BRIDGE-p" type dummy 2>/dev/null; then
			ip link set "$BRIDGE-p" master "$BRIDGE" up
		fi
		ip addr add "$HOST/28" dev "$BRIDGE"
		ip link set "$BRIDGE" up
		echo "lbnet: bridge $BRIDGE $HOST/28 (LoadBalancer addresses $FIRST-$LAST)"
	fi
	if [[ ! -e $CONFIG ]] || grep -qxF "$MARK" "$CONFIG"; then
		mkdir -p "$(dirname "$CONFIG")"
		cat >"$CONFIG" <<EOF
$MARK
apiVersion: cloudconfig.config.trireme.dev/v1alpha1
kind: CloudConfiguration
loadBalancer:
  pools:
  - name: default
    addresses: ["$FIRST-$LAST"]
EOF
		echo "lbnet: wrote $CONFIG (pool default: $FIRST-$LAST)"
	else
		echo "lbnet: kept $CONFIG (not make up's)"
	fi
	;;
down)
	ip link delete "$BRIDGE-p" 2>/dev/null || true
	ip link delete "$BRIDGE" 2>/dev/null || true
	if [[ -e $CONFIG ]] && grep -qxF "$MARK" "$CONFIG"; then
		rm -f "$CONFIG"
		rmdir "$(dirname "$CONFIG")" 2>/dev/null || true
	fi
	;;
*)
	echo "usage: lbnet.sh up|down" >&2
	exit 2
	;;
esac
