#!/usr/bin/env bash
# Measures a scheduler with the schedload driver: starts a dev-mode
# trireme-apiserver from _output/bin (or $TRIREME_BIN_DIR) on 127.0.0.1 in
# a temporary directory, then for each scenario lets the driver create the
# nodes, start the scheduler under test and create the pods, and prints
# its figures; stops everything by PID and removes the directory. Called by
# `make bench`; asserts nothing about time.
#
# Knobs (environment): SCHEDLOAD_NODES (5000), SCHEDLOAD_PODS (10000;
# antiaffinity and preemption place at most one per node),
# SCHEDLOAD_SCENARIOS (basic antiaffinity spread preferred preemption
# churn), SCHEDLOAD_BACKLOG (non-empty: create every pod before starting
# the scheduler, so the figure is the scheduler's own rate rather than
# bounded by pod creation), SCHEDLOAD_SCHEDULER (the trireme-scheduler
# binary; any kube-scheduler works: hack/build-upstream.sh kube-scheduler builds
# upstream's) and SCHEDLOAD_SCHEDULER_ARGS (its
# arguments; {kubeconfig} and {config} are replaced; the config lifts the
# client rate limits and turns leader election off).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/freeport.sh"
repo=$(cd "$here/../.." && pwd)
bindir=${TRIREME_BIN_DIR:-$repo/_output/bin}
server=$bindir/trireme-apiserver
scheduler=${SCHEDLOAD_SCHEDULER:-$bindir/trireme-scheduler}
for b in "$server" "$scheduler"; do
	if [[ ! -x $b ]]; then
		echo "run-schedload: $b not found: run \`make build\` first" >&2
		exit 1
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/trireme-schedload.XXXXXX")
pid=""

stop_server() {
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
	pid=""
}

cleanup() {
	status=$?
	stop_server
	if [[ $status -ne 0 && -f $work/apiserver.log ]]; then
		echo "run-schedload: last lines of the server's log:" >&2
		tail -n 40 "$work/apiserver.log" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "run-schedload: building the driver"
(cd "$repo/e2e" && go build -o "$work/schedload" ./bench/schedload)

# kube-scheduler ignores --kubeconfig when --config is given: the file names it.
cat >"$work/scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: $work/data/admin.kubeconfig
  qps: 10000
  burst: 20000
YAML

default_args='--kubeconfig {kubeconfig} --config {config} --secure-port 0'
for scenario in ${SCHEDLOAD_SCENARIOS:-basic antiaffinity spread preferred preemption churn}; do
	rm -rf "$work/data"
	port=$(free_port)
	"$server" --data-dir "$work/data" --secure-port "$port" --bind-address 127.0.0.1 \
		>"$work/apiserver.log" 2>&1 &
	pid=$!
	kubeconfig=$work/data/admin.kubeconfig
	for _ in $(seq 600); do
		[[ -s $kubeconfig ]] && break
		kill -0 "$pid" 2>/dev/null || { echo "run-schedload: server exited" >&2; exit 1; }
		sleep 0.2
	done
	# Wait for readiness: the first request the driver makes must succeed.
	for _ in $(seq 300); do
		kubectl --kubeconfig "$kubeconfig" get --raw /readyz >/dev/null 2>&1 && break
		sleep 0.2
	done
	args=$default_args
	[[ -n ${SCHEDLOAD_SCHEDULER_ARGS:-} ]] && args=$SCHEDLOAD_SCHEDULER_ARGS
	args=${args//\{config\}/$work/scheduler.yaml}
	echo "run-schedload: scenario $scenario, load before:$(uptime | sed 's/.*load average//')"
	"$work/schedload" --kubeconfig "$kubeconfig" --scenario "$scenario" \
		--nodes "${SCHEDLOAD_NODES:-5000}" --pods "${SCHEDLOAD_PODS:-10000}" \
		--scheduler "$scheduler" --scheduler-args "$args" ${SCHEDLOAD_BACKLOG:+--backlog}
	echo "run-schedload: scenario $scenario, load after:$(uptime | sed 's/.*load average//')"
	stop_server
done
