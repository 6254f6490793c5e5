#!/usr/bin/env bash
# run-dev.sh runs a dev-mode control plane in the foreground: the apiserver
# (embedded etcd, generated CA and admin.kubeconfig in $DATA_DIR) and the
# controller-manager beside it. Ctrl-C stops both, by their PIDs.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${TRIREME_BIN_DIR:-$repo/_output/bin}
data=${DATA_DIR:-$repo/_output/dev}
port=${PORT:-6443}
mkdir -p "$data"

pids=()
stop() {
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
}
trap stop EXIT INT TERM

"$bin/trireme-apiserver" --data-dir "$data" --bind-address 127.0.0.1 --secure-port "$port" &
pids+=($!)

kubeconfig=$data/admin.kubeconfig
echo "run-dev: waiting for the apiserver on https://127.0.0.1:$port ..." >&2
for _ in $(seq 240); do
	if [[ -s $kubeconfig ]] && KUBECONFIG=$kubeconfig kubectl get --raw /readyz >/dev/null 2>&1; then
		break
	fi
	kill -0 "${pids[0]}" 2>/dev/null || { echo "run-dev: the apiserver exited" >&2; exit 1; }
	sleep 0.5
done

"$bin/trireme-controller-manager" --kubeconfig "$kubeconfig" --secure-port=0 --leader-elect=false &
pids+=($!)

echo "run-dev: ready. In another shell: export KUBECONFIG=$kubeconfig" >&2
wait -n "${pids[@]}"
