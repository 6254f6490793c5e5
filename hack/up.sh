#!/usr/bin/env bash
# up.sh takes this machine (Debian 12, root) to a ready single-node Trireme cluster:
# the Debian packages if missing, the binaries and images, containerd with the
# images imported, `triremeadm init --single-node`, then it waits for the node to be
# Ready and the system pods to run. Extra init flags: UP_FLAGS="--node-name x ...".
# UP_ROOT=DIR installs below DIR instead of / (triremeadm's --root-dir, for tests).
# WORKERS=N adds N worker nodes in network namespaces, joined with the command
# init printed (trireme-nodes up N; e2e/internal/workernodes).
# LoadBalancer Services get addresses: init runs with --cloud-provider external
# and a default pool on the bridge trireme-lb0 (hack/lbnet.sh; UP_LB_CIDR, a
# private /28; UP_LB=0 leaves both out).
# UP_DISK_PRESSURE=off: the kubelets neither evict pods nor remove images as
# the disk fills, as kind's nodes: every node shares this machine's disk, and
# an image removed here cannot be pulled back (what `make conformance` needs
# on a disk over 80 % used). It writes that KubeletConfiguration and passes it
# as init's --config, which the workers' kubelets copy.
# `make down` (trireme-nodes down, then `triremeadm reset -f`) undoes it.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=_output/bin
ROOT=${UP_ROOT:-}
ADMIN=$ROOT/etc/trireme/admin.conf
FLAGS="${UP_FLAGS:-}${ROOT:+ --root-dir $ROOT}"
UP_LB=${UP_LB:-1}
if [[ $UP_LB == 1 ]]; then
	FLAGS="--cloud-provider external $FLAGS"
fi

case ${UP_DISK_PRESSURE:-on} in
on) ;;
off)
	if [[ " $FLAGS " == *" --config "* || " $FLAGS " == *" --config="* ]]; then
		echo "up: UP_DISK_PRESSURE=off writes init's --config; put its KubeletConfiguration in your --config file instead" >&2
		exit 1
	fi
	disk_config=$(mktemp --suffix=.yaml)
	trap 'rm -f "$disk_config"' EXIT
	cat >"$disk_config" <<'YAML'
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard:
  nodefs.available: "0%"
  nodefs.inodesFree: "0%"
  imagefs.available: "0%"
imageGCHighThresholdPercent: 100
YAML
	FLAGS="$FLAGS --config $disk_config"
	;;
*)
	echo "up: UP_DISK_PRESSURE must be on or off, not '$UP_DISK_PRESSURE'" >&2
	exit 1
	;;
esac

WORKERS=${WORKERS:-0}
if ! [[ $WORKERS =~ ^[0-9]+$ ]]; then
	echo "up: WORKERS must be a number of worker nodes, not '$WORKERS'" >&2
	exit 1
fi
if ((WORKERS > 0)) && [[ -n $ROOT ]]; then
	echo "up: WORKERS needs the cluster on this machine's root (no UP_ROOT)" >&2
	exit 1
fi

hack/install-deps.sh
make build images
if ((WORKERS > 0)); then
	make helm "$BIN/trireme-nodes"
fi

# The sysctls a node needs, which `triremeadm init` (kubeadm-strict) only
# checks: packets forwarded between pods and nodes, and bridged pod traffic
# seen by iptables/nftables so that Services work between pods of one node.
# UP_ROOT installs a cluster for tests below a directory; the kernel's
# settings are the machine's own either way.
sysctls=()
if [[ $(cat /proc/sys/net/ipv4/ip_forward) != 1 ]]; then
	echo 1 >/proc/sys/net/ipv4/ip_forward
	sysctls+=(net.ipv4.ip_forward=1)
fi
if [[ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then
	modprobe br_netfilter || { echo "up: cannot load br_netfilter (apt-get install -y kmod)" >&2; exit 1; }
fi
if [[ $(cat /proc/sys/net/bridge/bridge-nf-call-iptables) != 1 ]]; then
	echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
	sysctls+=(net.bridge.bridge-nf-call-iptables=1)
fi
if ((${#sysctls[@]} > 0)); then
	echo "up: set ${sysctls[*]} (a node forwards pod traffic; triremeadm init only checks them)"
fi
if [[ $UP_LB == 1 ]]; then
	UP_ROOT=$ROOT hack/lbnet.sh up
fi
# init's container-runtime phase starts containerd first, so the images are in
# its k8s.io namespace before the kubelet looks for them.
# shellcheck disable=SC2086
"$BIN/triremeadm" init phase container-runtime $FLAGS
"$BIN/triremeadm" images import --dir _output/images --containerd-socket "$ROOT/run/containerd/containerd.sock"
start=$(date +%s)
# init's output, for its worker join command (read by trireme-nodes).
init_out=$(mktemp)
trap 'rm -f "$init_out" ${disk_config:+"$disk_config"}' EXIT
# shellcheck disable=SC2086
"$BIN/triremeadm" init --single-node $FLAGS 2>&1 | tee "$init_out"

export KUBECONFIG=$ADMIN
kubectl wait --for=condition=Ready nodes --all --timeout=120s
# Static pods and addons: the four control-plane mirror pods present and every
# kube-system pod ready.
ready() {
	local n
	n=$(kubectl -n kube-system get pods -l tier=control-plane --no-headers 2>/dev/null | wc -l)
	((n >= 4)) && kubectl -n kube-system wait --for=condition=Ready pods --all --timeout=10s >/dev/null 2>&1
}
deadline=$(($(date +%s) + 120))
until ready; do
	sleep 1
	if (($(date +%s) > deadline)); then
		kubectl -n kube-system get pods -o wide
		echo "up: kube-system pods not ready after 120s (logs in /var/log/trireme)" >&2
		exit 1
	fi
done
if ((WORKERS > 0)); then
	"$BIN/trireme-nodes" up "$WORKERS" --init-output "$init_out" --kubeconfig "$ADMIN"
fi
kubectl get nodes -o wide
kubectl -n kube-system get pods -o wide
echo
echo "Cluster ready in $(($(date +%s) - start))s. Use it with:"
echo
echo "  export KUBECONFIG=$ADMIN; kubectl get pods -A"
