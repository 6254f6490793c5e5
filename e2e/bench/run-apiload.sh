#!/usr/bin/env bash
# Measures a dev-mode trireme-apiserver with the apiload driver: starts the
# server from _output/bin (or $TRIREME_BIN_DIR) on 127.0.0.1 in a temporary
# directory, records its idle memory, runs the verbs of each kind on a fresh
# server, then a large list and a watch fan-out, prints the figures, and
# stops each server by PID and removes the directory. Called by `make
# bench`; asserts nothing about time.
#
# First, unless APILOAD_STATIC_IDLE=0, it measures idle memory the way a
# cluster runs the server: a separate etcd (from the same bin dir), Node,RBAC
# authorization, NodeRestriction, bootstrap tokens, nothing created; it
# reports VmRSS (anon and file) after APILOAD_STATIC_IDLE (150s: the server
# trims its memory once it has been idle 30 s).
#
# Then, unless APILOAD_RBAC_OBJECTS=0, it measures the cost of authorization:
# creates as admin with that many Roles and RoleBindings loaded and the full
# admission chain on, once with --authorization-mode=Node,RBAC and once with
# AlwaysAllow, each on a fresh server, and prints both rates.
#
# Knobs (environment): APILOAD_IDENTITY (admin), APILOAD_CLIENTS (100), APILOAD_DURATION per verb (20s),
# APILOAD_LIST_OBJECTS (20000: objects of each kind the list verb walks,
# created or deleted untimed before it, so kinds list as many whatever their
# create rates), APILOAD_LIST_SIZE (10000), APILOAD_WATCHERS (1000), APILOAD_IDLE (20s),
# APILOAD_KINDS (configmaps,configmaps-protobuf,customresources: ConfigMaps over
# JSON and over protobuf, and a CRD of a ConfigMap's shape, JSON only, decoded into a
# Go type and, as customresources-unstructured, by the dynamic client),
# APILOAD_DISCOVERY_CRDS (200: CRDs installed before timing full discovery),
# APILOAD_RBAC_OBJECTS (1000), APILOAD_RBAC_DURATION (20s).
#
# APILOAD_OURS=0 skips the verbs on trireme-apiserver.
# APILOAD_UPSTREAM=path/to/kube-apiserver (hack/build-upstream.sh
# kube-apiserver builds it) also runs each kind's verbs on upstream's server,
# fresh with its own etcd per kind, as the same kind of identity, so the
# figures (and the custom resource to ConfigMap ratios) sit beside ours;
# ours then runs on an etcd process of its own as well.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/freeport.sh"
repo=$(cd "$here/../.." && pwd)
server=${TRIREME_BIN_DIR:-$repo/_output/bin}/trireme-apiserver
if [[ ! -x $server ]]; then
	echo "run-apiload: $server not found: run \`make build\` first" >&2
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/trireme-apiload.XXXXXX")
pid=""

# stop_server ends the server we started, by its PID only: SIGTERM, then
# SIGKILL if it is still there after 20 s.
stop_server() {
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "run-apiload: server ignored SIGTERM for 20s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
	pid=""
}

etcd_pid=""

# start_etcd runs a fresh etcd from the bin dir in $work/etcd; sets etcd_pid
# and etcd_url.
start_etcd() {
	local eport pport
	rm -rf "$work/etcd"
	eport=$(free_port)
	pport=$(free_port)
	"$(dirname "$server")/etcd" --data-dir "$work/etcd" --listen-client-urls "http://127.0.0.1:$eport" \
		--advertise-client-urls "http://127.0.0.1:$eport" --listen-peer-urls "http://127.0.0.1:$pport" \
		--initial-advertise-peer-urls "http://127.0.0.1:$pport" --initial-cluster "default=http://127.0.0.1:$pport" \
		>"$work/etcd.log" 2>&1 &
	etcd_pid=$!
	etcd_url=http://127.0.0.1:$eport
}

# stop_etcd ends the etcd start_etcd started, by its PID.
stop_etcd() {
	[[ -n $etcd_pid ]] || return 0
	kill -TERM "$etcd_pid" 2>/dev/null || true
	wait "$etcd_pid" 2>/dev/null || true
	etcd_pid=""
	rm -rf "$work/etcd"
}

cleanup() {
	status=$?
	stop_server
	stop_etcd
	if [[ $status -ne 0 && -f $work/apiserver.log ]]; then
		echo "run-apiload: last lines of the server's log:" >&2
		tail -n 40 "$work/apiserver.log" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "run-apiload: building the driver"
(cd "$repo/e2e" && go build -o "$work/apiload" ./bench/apiload)

# start_server runs a fresh server in $work/data with the given extra flags
# and waits for the identity's kubeconfig; sets pid and kubeconfig.
start_server() {
	rm -rf "$work/data"
	local port
	port=$(free_port)
	"$server" --data-dir "$work/data" --secure-port "$port" --bind-address 127.0.0.1 "$@" \
		>"$work/apiserver.log" 2>&1 &
	pid=$!
	echo "run-apiload: started $server $* (pid $pid) on 127.0.0.1:$port"
	# APILOAD_IDENTITY=super-admin measures as system:masters (exempt from API
	# priority and fairness and from RBAC evaluation), as a comparison run may.
	kubeconfig=$work/data/${APILOAD_IDENTITY:-admin}.kubeconfig
	for _ in $(seq 600); do
		[[ -s $kubeconfig ]] && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "run-apiload: server exited before writing $kubeconfig" >&2
			exit 1
		fi
		sleep 0.2
	done
	echo "run-apiload: no $kubeconfig after 120s" >&2
	exit 1
}

static_idle=${APILOAD_STATIC_IDLE:-150s}
if [[ $static_idle != 0 ]]; then
	start_etcd
	echo "run-apiload: idle memory with an external etcd (pid $etcd_pid), as the static pod runs"
	start_server --etcd-servers "$etcd_url" --authorization-mode Node,RBAC \
		--enable-admission-plugins NodeRestriction --enable-bootstrap-token-auth=true
	"$work/apiload" --kubeconfig "$kubeconfig" --server-pid "$pid" --wait-ready 120s \
		--idle "$static_idle" --verbs "" --kinds configmaps
	stop_server
	stop_etcd
	echo
fi

# Each kind's verbs run on a fresh server. One after another on one server,
# a kind met the heap, watch cache and etcd history of the kinds before it:
# whichever of ConfigMaps and custom resources ran second lost 15-40 % of
# its rate to that alone, even with the first kind's objects deleted.
# Each server also sits idle for the same APILOAD_IDLE before its kind is
# timed: a server timed the moment it is ready is still finishing start-up
# work, and measured 20-30 % slower on every verb than one left 15 s.
IFS=, read -ra kinds <<<"${APILOAD_KINDS:-configmaps,configmaps-protobuf,customresources,customresources-unstructured}"
idle=${APILOAD_IDLE:-20s}
# run_verbs times every verb of kind $1 on the server started last.
run_verbs() {
	"$work/apiload" \
		--kubeconfig "$kubeconfig" \
		--server-pid "$pid" \
		--wait-ready 120s \
		--idle "$idle" \
		--clients "${APILOAD_CLIENTS:-100}" \
		--duration "${APILOAD_DURATION:-20s}" \
		--kinds "$1" \
		--list-objects "${APILOAD_LIST_OBJECTS:-20000}" \
		--verbs create,get,list,update,patch,watch
}
for kind in "${kinds[@]}"; do
	[[ ${APILOAD_OURS:-1} != 0 ]] || break
	if [[ -n ${APILOAD_UPSTREAM:-} ]]; then
		# Beside upstream, which cannot embed etcd, ours runs on its own
		# etcd process too, so both pay the same for storage.
		start_etcd
		start_server --etcd-servers "$etcd_url"
	else
		start_server
	fi
	run_verbs "$kind"
	stop_server
	stop_etcd
done

if [[ -n ${APILOAD_UPSTREAM:-} ]]; then
	# shellcheck source=e2e/bench/upstream-apiserver.sh
	source "$here/upstream-apiserver.sh"
	for kind in "${kinds[@]}"; do
		start_upstream "$APILOAD_UPSTREAM"
		run_verbs "$kind"
		stop_server
		stop_etcd
	done
fi

start_server
"$work/apiload" \
	--kubeconfig "$kubeconfig" \
	--server-pid "$pid" \
	--wait-ready 120s \
	--clients "${APILOAD_CLIENTS:-100}" \
	--verbs "" \
	--list-size "${APILOAD_LIST_SIZE:-10000}" \
	--watchers "${APILOAD_WATCHERS:-1000}" \
	--discovery-crds "${APILOAD_DISCOVERY_CRDS:-200}"
stop_server

rbac_objects=${APILOAD_RBAC_OBJECTS:-1000}
if [[ $rbac_objects -gt 0 ]]; then
	for mode in Node,RBAC AlwaysAllow; do
		echo
		echo "run-apiload: authorization $mode, $rbac_objects Roles and RoleBindings, default admission chain"
		start_server --authorization-mode "$mode"
		"$work/apiload" \
			--kubeconfig "$kubeconfig" \
			--wait-ready 120s \
			--clients "${APILOAD_CLIENTS:-100}" \
			--duration "${APILOAD_RBAC_DURATION:-20s}" \
			--kinds configmaps \
			--verbs create \
			--rbac-objects "$rbac_objects"
		stop_server
	done
fi
