# images.mk: `make images` writes one docker-archive per image to _output/images/<name>.tar,
# referenced as trireme.dev/<name>:$(IMAGE_VERSION) and importable with
# `ctr -n k8s.io images import`. Include it from the top-level Makefile
# (`include images/images.mk`); run from the repository root so go.work applies.
# The top-level Makefile provides the rules for the components' binaries in
# _output/bin (`make build`).
#
# Archives are reproducible: the same binaries, version and SOURCE_DATE_EPOCH (the last
# commit's time) give byte-identical tarballs.

IMAGE_VERSION     ?= dev
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH
# Debian's busybox-static (`apt-get install -y busybox-static`): a static binary, so it
# runs on the empty base.
BUSYBOX           ?= /bin/busybox
IMAGE_BUILD       := _output/bin/image-build
IMAGES_DIR        := _output/images
# The host's nft, iptables and conntrack with their libraries, laid out by
# images/rootfs/netfilter.sh once per make run for every image that runs them.
NETFILTER_ROOTFS  := _output/rootfs/netfilter

.PHONY: images $(NETFILTER_ROOTFS) _output/bin/image-build _output/bin/image-registry _output/bin/pause _output/bin/etcd _output/bin/coredns _output/bin/echo _output/bin/local-path-provisioner _output/bin/metrics-server _output/bin/metrics-check _output/bin/flanneld _output/bin/flannel-cni-config _output/bin/traefik

# NODE_IMAGES are the images a node needs, from the one list of them (which
# triremeadm's is generated from); echo is the end-to-end suites' own.
NODE_IMAGES := $(shell sed -e 's/\#.*//' images/names.txt)
images: $(patsubst %,$(IMAGES_DIR)/%.tar,$(NODE_IMAGES)) $(IMAGES_DIR)/echo.tar

# go decides what is stale, so the binaries are always "rebuilt" (cheaply, from cache).
_output/bin/image-build:
	go build -o $@ ./images/cmd/image-build

# The conformance run's registry mirror (hack/conformance.sh).
_output/bin/image-registry:
	go build -o $@ ./images/cmd/image-registry

_output/bin/pause:
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $@ ./images/cmd/pause

_output/bin/echo:
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $@ ./images/cmd/echo

# etcd's own main (go.etcd.io/etcd/server/v3/etcdmain at the version the apiserver
# embeds), for triremeadm's etcd static pod.
_output/bin/etcd:
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $@ ./images/cmd/etcd

# The apiserver runs as root, as upstream's image does: it reads root-only certificates
# under /etc/kubernetes/pki; a pod's securityContext may still lower it.
$(IMAGES_DIR)/trireme-apiserver.tar: _output/bin/trireme-apiserver $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/trireme-apiserver:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/trireme-apiserver=/usr/local/bin/trireme-apiserver:0755 \
		--entrypoint /usr/local/bin/trireme-apiserver

# Root, as upstream's kube-controller-manager image runs: it reads its kubeconfig and the
# cluster CA from root-only files under /etc/trireme.
$(IMAGES_DIR)/trireme-controller-manager.tar: _output/bin/trireme-controller-manager $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/trireme-controller-manager:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/trireme-controller-manager=/usr/local/bin/trireme-controller-manager:0755 \
		--entrypoint /usr/local/bin/trireme-controller-manager

# Root, as the controller-manager: it reads its kubeconfig from a root-only file
# under /etc/trireme.
$(IMAGES_DIR)/trireme-cloud-controller-manager.tar: _output/bin/trireme-cloud-controller-manager $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/trireme-cloud-controller-manager:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/trireme-cloud-controller-manager=/usr/local/bin/trireme-cloud-controller-manager:0755 \
		--entrypoint /usr/local/bin/trireme-cloud-controller-manager

# Upstream's kube-scheduler image runs as root too: it reads its kubeconfig
# from a root-only file under /etc/kubernetes.
$(IMAGES_DIR)/trireme-scheduler.tar: _output/bin/trireme-scheduler $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/trireme-scheduler:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/trireme-scheduler=/usr/local/bin/trireme-scheduler:0755 \
		--entrypoint /usr/local/bin/trireme-scheduler

# 65535 is the uid upstream's pause image runs as; pause needs no privilege.
$(IMAGES_DIR)/pause.tar: _output/bin/pause $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/pause:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/pause=/pause:0755 \
		--entrypoint /pause --user 65535:65535

# Laid out like upstream's busybox image: every applet a symlink in /bin, Cmd sh.
$(IMAGES_DIR)/busybox.tar: $(IMAGE_BUILD)
	@test -x $(BUSYBOX) || { echo "$(BUSYBOX) missing: apt-get install -y busybox-static" >&2; exit 1; }
	$(IMAGE_BUILD) --name trireme.dev/busybox:$(IMAGE_VERSION) --out $@ \
		--file $(BUSYBOX)=/bin/busybox:0755 --busybox-links /bin/busybox \
		--file images/rootfs/busybox/etc/passwd=/etc/passwd:0644 \
		--file images/rootfs/busybox/etc/group=/etc/group:0644 \
		--dir /tmp:1777 --dir /root:0700 --dir /home --dir /var \
		--cmd sh

# Root, as upstream's etcd image runs: it owns /var/lib/trireme/etcd and reads the
# root-only etcd certificates.
# trireme-etcd-snapshot (triremeadm's etcd-snapshot static pod) rides along:
# every node that runs etcd holds this image already.
$(IMAGES_DIR)/etcd.tar: _output/bin/etcd _output/bin/trireme-etcd-snapshot $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/etcd:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/etcd=/usr/local/bin/etcd:0755 \
		--file _output/bin/trireme-etcd-snapshot=/usr/local/bin/trireme-etcd-snapshot:0755 \
		--entrypoint /usr/local/bin/etcd

# The netfilter tools' tree: phony, so that it follows the host's packages;
# make runs it once however many images need it.
$(NETFILTER_ROOTFS):
	./images/rootfs/netfilter.sh $@

# The proxy runs nft, iptables-restore and conntrack, which Debian links
# dynamically: images/rootfs/netfilter.sh lays out the host's binaries with their
# libraries, loader and iptables extensions, and the image carries them. It
# runs as root with hostNetwork and NET_ADMIN, as upstream's kube-proxy does.
$(IMAGES_DIR)/trireme-proxy.tar: _output/bin/trireme-proxy $(IMAGE_BUILD) $(NETFILTER_ROOTFS)
	$(IMAGE_BUILD) --name trireme.dev/trireme-proxy:$(IMAGE_VERSION) --out $@ \
		--base-dir $(NETFILTER_ROOTFS) \
		--file _output/bin/trireme-proxy=/usr/local/bin/trireme-proxy:0755 \
		--entrypoint /usr/local/bin/trireme-proxy

# trireme-netpol writes its table with nft (through knftables), so its image
# carries the proxy's netfilter tools. Root with hostNetwork and NET_ADMIN, as
# the chart's DaemonSet runs it.
$(IMAGES_DIR)/trireme-netpol.tar: _output/bin/trireme-netpol $(IMAGE_BUILD) $(NETFILTER_ROOTFS)
	$(IMAGE_BUILD) --name trireme.dev/trireme-netpol:$(IMAGE_VERSION) --out $@ \
		--base-dir $(NETFILTER_ROOTFS) \
		--file _output/bin/trireme-netpol=/usr/local/bin/trireme-netpol:0755 \
		--entrypoint /usr/local/bin/trireme-netpol

# CoreDNS from its Go module with the plugins a cluster's DNS uses
# (images/coredns/main.go). It is a module of its own, outside go.work: CoreDNS's
# dependency graph (cloud SDKs, quic-go, ...) would otherwise join every Trireme
# module's version selection. Its k8s.io libraries are pinned to ours anyway.
_output/bin/coredns:
	cd images/coredns && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o ../../$@ .

# The pod drops every capability but NET_BIND_SERVICE (port 53) and mounts its root read-only.
$(IMAGES_DIR)/coredns.tar: _output/bin/coredns $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/coredns:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/coredns=/coredns:0755 \
		--entrypoint /coredns

# The service-test workload: HTTP on 8080 and UDP on 8081 answering with the
# pod's name ($POD_NAME or the host name), the client's address or an echo.
# It needs no privilege.
$(IMAGES_DIR)/echo.tar: _output/bin/echo $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/echo:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/echo=/echo:0755 \
		--entrypoint /echo --user 65534:65534

# The control plane's virtual-IP manager: root with hostNetwork, NET_ADMIN and
# NET_RAW (its static pod adds them) to change addresses and send ARP.
$(IMAGES_DIR)/trireme-vip.tar: _output/bin/trireme-vip $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/trireme-vip:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/trireme-vip=/usr/local/bin/trireme-vip:0755 \
		--entrypoint /usr/local/bin/trireme-vip

# Rancher's local-path-provisioner (the version k3s and kind ship), built from its
# Go module: images/local-path-provisioner is a module of its own outside go.work
# (as images/coredns) holding a `tool` requirement on it, with its
# k8s.io libraries pinned to ours. Its version flag reads main.VERSION.
# Upstream's package main is built as the root package of that module, through
# a go build -overlay that maps its files from the module cache there, so that
# images/local-path-provisioner/memtrim.go (build tag trireme_overlay) joins it:
# componentbase's idle trimmer. Nothing of upstream's is copied or changed.
LOCAL_PATH_VERSION = $(shell cd images/local-path-provisioner && GOWORK=off go list -m -f '{{.Version}}' github.com/rancher/local-path-provisioner 2>/dev/null)
_output/bin/local-path-provisioner:
	@mkdir -p _output
	cd images/local-path-provisioner && GOWORK=off go mod download github.com/rancher/local-path-provisioner && \
		src="$$(GOWORK=off go list -m -f '{{.Dir}}' github.com/rancher/local-path-provisioner)" && \
		{ sep=; printf '{"Replace":{'; for f in "$$src"/*.go; do case "$$f" in *_test.go) continue;; esac; \
			printf '%s"%s":"%s"' "$$sep" "$$PWD/$${f##*/}" "$$f"; sep=,; done; printf '}}\n'; } > ../../_output/local-path-overlay.json && \
		GOWORK=off CGO_ENABLED=0 go build -trimpath -tags trireme_overlay -overlay ../../_output/local-path-overlay.json \
		-ldflags='-s -w -X main.VERSION=$(LOCAL_PATH_VERSION)' -o ../../$@ .

# It only talks to the apiserver (its helper pods, in the busybox image, touch the
# node's directories), so it runs as nobody.
$(IMAGES_DIR)/local-path-provisioner.tar: _output/bin/local-path-provisioner $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/local-path-provisioner:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/local-path-provisioner=/usr/local/bin/local-path-provisioner:0755 \
		--entrypoint /usr/local/bin/local-path-provisioner --user 65534:65534

# The web console runs as nobody of its own (65532): it needs no file of the
# node and holds no credential; the chart mounts only the cluster's CA.
$(IMAGES_DIR)/trireme-dashboard.tar: _output/bin/trireme-dashboard $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/trireme-dashboard:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/trireme-dashboard=/usr/local/bin/trireme-dashboard:0755 \
		--entrypoint /usr/local/bin/trireme-dashboard --user 65532:65532

# metrics-server (sigs.k8s.io/metrics-server's cmd/metrics-server/app), run by
# a main of images/metrics-server that adds componentbase's idle memory trimmer;
# a module of its own outside go.work as CoreDNS is, its k8s.io libraries
# pinned to ours (see its README for why v0.9.0). Its --version reads
# client-go's version variables, as upstream's Makefile sets them.
METRICS_SERVER_VERSION := $(shell sed -n 's|^\tsigs.k8s.io/metrics-server \(v[^ ]*\).*|\1|p' images/metrics-server/go.mod)
_output/bin/metrics-server:
	cd images/metrics-server && GOWORK=off CGO_ENABLED=0 go build -trimpath \
		-ldflags='-s -w -X k8s.io/client-go/pkg/version.gitVersion=$(METRICS_SERVER_VERSION)' \
		-o ../../$@ ./cmd/metrics-server

# The chart's helm test: reads metrics.k8s.io from inside the cluster.
_output/bin/metrics-check:
	cd images/metrics-server && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o ../../$@ ./cmd/metrics-check

# Non-root, as upstream's image runs (the chart sets uid 65534 and a read-only
# root); it carries the chart's test binary too, so the test needs no image of its own.
$(IMAGES_DIR)/metrics-server.tar: _output/bin/metrics-server _output/bin/metrics-check $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/metrics-server:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/metrics-server=/metrics-server:0755 \
		--file _output/bin/metrics-check=/metrics-check:0755 \
		--entrypoint /metrics-server --user 65534:65534

# flanneld from flannel's Go packages (images/flannel/main.go: the kube subnet
# manager with the vxlan and host-gw backends), a module of its own outside
# go.work as CoreDNS is; its k8s.io libraries are pinned to ours.
_output/bin/flanneld:
	cd images/flannel && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o ../../$@ .

_output/bin/flannel-cni-config:
	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o $@ ./images/cmd/flannel-cni-config

# The pod network's node agent and the sidecar that writes the node's CNI
# configuration. flanneld runs iptables/ip6tables (or nft) as Debian links them,
# so the image carries the same netfilter tools as the proxy's. Root with
# hostNetwork and privileged, as upstream's flannel DaemonSet runs.
$(IMAGES_DIR)/flannel.tar: _output/bin/flanneld _output/bin/flannel-cni-config $(IMAGE_BUILD) $(NETFILTER_ROOTFS)
	$(IMAGE_BUILD) --name trireme.dev/flannel:$(IMAGE_VERSION) --out $@ \
		--base-dir $(NETFILTER_ROOTFS) \
		--file _output/bin/flanneld=/opt/bin/flanneld:0755 \
		--file _output/bin/flannel-cni-config=/usr/local/bin/flannel-cni-config:0755 \
		--entrypoint /opt/bin/flanneld

# Traefik v3 (github.com/traefik/traefik/v3's cmd/traefik) for the traefik
# addon, from images/traefik: a module of its own outside go.work, as
# CoreDNS's, that requires Traefik and repeats what of its go.mod applies
# only to Traefik's own build: the replace of its nested dynamic/ext module
# (a directory the module zip lacks; images/traefik/ext stands in with the
# two types the build needs) and its forks. Its k8s.io libraries, Gateway
# API and controller-runtime are pinned to ours. lego_dnslight (lego's own
# build tag) leaves out lego's DNS-01 providers, whose cloud SDKs the module
# proxy does not serve: ACME's HTTP-01 and TLS-ALPN-01 challenges remain.
# The web UI's assets are not built (its embed directory holds only a note),
# and the chart leaves the dashboard off.
TRAEFIK_VERSION = $(shell cd images/traefik && GOWORK=off go list -m -f '{{.Version}}' github.com/traefik/traefik/v3 2>/dev/null)
_output/bin/traefik:
	cd images/traefik && GOWORK=off CGO_ENABLED=0 go build -tags lego_dnslight -trimpath \
		-ldflags='-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$(TRAEFIK_VERSION) -X github.com/traefik/traefik/v3/pkg/version.BuildDate=$(SOURCE_DATE_EPOCH)' \
		-o ../../$@ github.com/traefik/traefik/v3/cmd/traefik

# Root with NET_BIND_SERVICE, as the chart runs it, to listen on :80 and :443
# (the Gateway listeners' ports are its entry points'); its root file system
# is read-only.
$(IMAGES_DIR)/trireme-traefik.tar: _output/bin/traefik $(IMAGE_BUILD)
	$(IMAGE_BUILD) --name trireme.dev/trireme-traefik:$(IMAGE_VERSION) --out $@ \
		--file _output/bin/traefik=/usr/local/bin/traefik:0755 \
		--dir /tmp:1777 \
		--entrypoint /usr/local/bin/traefik
