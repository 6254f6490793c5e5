# Sourced by run-apiload.sh: start_upstream runs upstream's kube-apiserver
# the way kubeadm does (its own etcd, Node,RBAC, the default admission
# chain plus NodeRestriction, a service-account key), so the load driver
# measures it on the same work as trireme-apiserver. Uses run-apiload.sh's
# work, free_port, start_etcd and sets pid and kubeconfig as start_server
# does.

# upstream_pki writes, once per run, a CA, a serving certificate for
# 127.0.0.1, a service-account key and two client certificates: admin
# (group kubeadm:cluster-admins, bound to cluster-admin once the server is
# up, as kubeadm's admin.conf) and super-admin (system:masters).
upstream_pki() {
	local pki=$work/upstream-pki
	[[ -s $pki/admin.crt ]] && return 0
	mkdir -p "$pki"
	(
		cd "$pki"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
			-keyout ca.key -out ca.crt -subj /CN=apiload-upstream-ca 2>/dev/null
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
			-out server.csr -subj /CN=kube-apiserver 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
		openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
			-extfile server.ext -out server.crt 2>/dev/null
		for id in admin:kubeadm:cluster-admins super-admin:system:masters; do
			name=${id%%:*}
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$name.key" \
				-out "$name.csr" -subj "/O=${id#*:}/CN=apiload-$name" 2>/dev/null
			openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
				-out "$name.crt" 2>/dev/null
		done
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
}

# upstream_kubeconfig writes the kubeconfig of identity $1 for the server
# on port $2 to $3.
upstream_kubeconfig() {
	local pki=$work/upstream-pki
	cat >"$3" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: upstream
  cluster:
    server: https://127.0.0.1:$2
    certificate-authority: $pki/ca.crt
users:
- name: $1
  user:
    client-certificate: $pki/$1.crt
    client-key: $pki/$1.key
contexts:
- name: upstream
  context: {cluster: upstream, user: $1}
current-context: upstream
KUBECONFIG
}

# start_upstream starts kube-apiserver binary $1 on a fresh etcd and waits
# until it is ready and the identity's binding exists.
start_upstream() {
	local bin=$1 port pki=$work/upstream-pki
	upstream_pki
	start_etcd
	port=$(free_port)
	"$bin" --etcd-servers "$etcd_url" --secure-port "$port" --bind-address 127.0.0.1 \
		--advertise-address 127.0.0.1 --endpoint-reconciler-type none --tls-cert-file "$pki/server.crt" --tls-private-key-file "$pki/server.key" \
		--client-ca-file "$pki/ca.crt" --service-account-key-file "$pki/sa.pub" \
		--service-account-signing-key-file "$pki/sa.key" --service-account-issuer https://kubernetes.default.svc \
		--service-cluster-ip-range 10.96.0.0/12 --authorization-mode Node,RBAC \
		--enable-admission-plugins NodeRestriction --enable-bootstrap-token-auth=true \
		>"$work/apiserver.log" 2>&1 &
	pid=$!
	echo "run-apiload: started upstream $bin (pid $pid) on 127.0.0.1:$port, etcd pid $etcd_pid"
	upstream_kubeconfig super-admin "$port" "$work/upstream-super-admin.kubeconfig"
	upstream_kubeconfig admin "$port" "$work/upstream-admin.kubeconfig"
	kubeconfig=$work/upstream-${APILOAD_IDENTITY:-admin}.kubeconfig
	local sa=(--kubeconfig "$work/upstream-super-admin.kubeconfig")
	for _ in $(seq 600); do
		if kubectl "${sa[@]}" create clusterrolebinding apiload-cluster-admins \
			--clusterrole cluster-admin --group kubeadm:cluster-admins >/dev/null 2>&1 ||
			kubectl "${sa[@]}" get clusterrolebinding apiload-cluster-admins >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "run-apiload: upstream server exited" >&2
			exit 1
		fi
		sleep 0.2
	done
	echo "run-apiload: upstream server not ready after 120s" >&2
	exit 1
}
