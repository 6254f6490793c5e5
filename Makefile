# Trireme's build. Every target runs from the repository root, where go.work
# ties the modules together.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# The Kubernetes version whose API Trireme serves; kubectl parses it.
KUBE_VERSION  ?= v1.37.0
GIT_COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
VERSION       ?= $(KUBE_VERSION)-trireme.$(GIT_COMMIT)
IMAGE_VERSION ?= $(VERSION)
BIN           := _output/bin
GO_LDFLAGS    := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=37 \
	-X k8s.io/component-base/version.gitCommit=$(GIT_COMMIT) \
	-X k8s.io/component-base/version.gitTreeState=clean
# Unit and integration tests of every module; the e2e module has its own target.
TEST_PKGS     := ./api/... ./apiserver/... ./cloud-controller-manager/... ./componentbase/... ./controller-manager/... ./dashboard/... ./images/... ./adm/... ./kubelet/... ./netpol/... ./proxy/... ./scheduler/...
# Suites written against testcluster.Cluster: `make test` runs them with the
# components inside the test binary, `make e2e` again against the built
# binaries (TRIREME_TEST_DEPTH=process).
TWO_DEPTH_PKGS := ./apiserver/test/integration/
GO_TEST_FLAGS ?=
# Test binaries link without DWARF (-w): linking 190 test binaries is most
# of a test run on two cores, and DWARF is about a fifth of each link. go
# test's own vet pass is off: `make verify` runs go vet over every package,
# test files included, so `make check` would type-check everything twice.
TEST_FLAGS    := -ldflags=-w -vet=off

.PHONY: all build test test-unit e2e e2e-faults e2e-cluster bench bench-faults bench-cluster bench-scale kwok conformance conformance-build conformance-netpol conformance-gateway generate verify fix images check clean run up down helm

all: build

## build: every binary into _output/bin (static, version stamped)
build: $(BIN)/trireme-apiserver $(BIN)/trireme-controller-manager $(BIN)/trireme-cloud-controller-manager $(BIN)/trireme-scheduler $(BIN)/trireme-kubelet $(BIN)/trireme-proxy $(BIN)/trireme-netpol $(BIN)/trireme-dashboard $(BIN)/triremeadm $(BIN)/etcd $(BIN)/trireme-vip $(BIN)/trireme-etcd-snapshot

$(BIN)/trireme-apiserver: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./apiserver/cmd/trireme-apiserver

$(BIN)/trireme-controller-manager: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./controller-manager/cmd/trireme-controller-manager

$(BIN)/trireme-cloud-controller-manager: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./cloud-controller-manager/cmd/trireme-cloud-controller-manager

$(BIN)/trireme-scheduler: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./scheduler/cmd/trireme-scheduler

# triremeadm's default version is the build's, so it installs the images built with it.
$(BIN)/triremeadm: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS) -X trireme.dev/adm/internal/version.Version=$(VERSION)' -o $@ ./adm/cmd/triremeadm

# The control plane's virtual-IP manager (adm/internal/vip), run as a static pod.
$(BIN)/trireme-vip: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./adm/cmd/trireme-vip

# The etcd-snapshot static pod's loop; it ships in the etcd image.
$(BIN)/trireme-etcd-snapshot: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./adm/cmd/trireme-etcd-snapshot

$(BIN)/trireme-kubelet: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./kubelet/cmd/trireme-kubelet

$(BIN)/trireme-proxy: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./proxy/cmd/trireme-proxy

$(BIN)/trireme-netpol: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./netpol/cmd/trireme-netpol

$(BIN)/trireme-dashboard: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '$(GO_LDFLAGS)' -o $@ ./dashboard/cmd/trireme-dashboard

## helm: the helm CLIs users drive the addons release with, built from their Go
## modules (hack/helm/v4, hack/helm/v3; never downloaded): _output/bin/helm is
## Helm 4, _output/bin/helm3 Helm 3 for users who still have it.
HELM4_VERSION := $(shell awk '$$1 == "helm.sh/helm/v4" {print $$2}' hack/helm/v4/go.mod)
HELM3_VERSION := $(shell awk '$$1 == "helm.sh/helm/v3" {print $$2}' hack/helm/v3/go.mod)
helm: $(BIN)/helm $(BIN)/helm3

$(BIN)/helm: FORCE
	cd hack/helm/v4 && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags '-s -w -X helm.sh/helm/v4/internal/version.version=$(HELM4_VERSION)' -o $(CURDIR)/$@ helm.sh/helm/v4/cmd/helm

$(BIN)/helm3: FORCE
	cd hack/helm/v3 && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags '-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM3_VERSION)' -o $(CURDIR)/$@ helm.sh/helm/v3/cmd/helm

## test: unit and integration tests of every module
test:
	go test $(TEST_FLAGS) $(GO_TEST_FLAGS) $(TEST_PKGS)

## test-unit: unit tests only (-short leaves out the tests that start an
## apiserver, etcd or triremeadm's phases)
test-unit:
	go test -short $(TEST_FLAGS) $(GO_TEST_FLAGS) $(TEST_PKGS)

## e2e: end-to-end suites against the built binaries, and the suites of
## TWO_DEPTH_PKGS against them too; as root also e2e/faults and e2e/cluster,
## clusters installed by triremeadm on this machine (E2E_CLUSTER=0 leaves them out)
e2e: build
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) TRIREME_TEST_DEPTH=process go test $(TEST_FLAGS) $(GO_TEST_FLAGS) -count=1 -timeout 30m ./e2e/... $(TWO_DEPTH_PKGS)
	@if [ "$(E2E_CLUSTER)" = 1 ]; then $(MAKE) --no-print-directory e2e-faults e2e-cluster; fi

## e2e-faults: a three-node HA control plane and a worker of network namespaces under a
## write load, faults one at a time (FAULTS_ROUNDS=N: N times over), no acknowledged write lost
e2e-faults: build images
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) TRIREME_E2E_FAULTS=1 FAULTS_ROUNDS=$(FAULTS_ROUNDS) go test $(TEST_FLAGS) -count=1 -v -timeout 40m ./e2e/faults/
FAULTS_ROUNDS ?= 1

# e2e/cluster runs alone, after the other suites: it takes the host's ports
# 6443, 2379-2381, 10250, ... and prints "N passed, N failed" at its end.
E2E_CLUSTER ?= $(if $(filter 0,$(shell id -u)),1,0)

## e2e-cluster: triremeadm init --single-node and join of two netns workers, then workloads,
## CI's subset of upstream's conformance specs (hack/conformance-ci.txt), then reset
e2e-cluster: build images helm conformance-build
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) TRIREME_E2E_CLUSTER=1 go test $(TEST_FLAGS) -count=1 -v -timeout 45m ./e2e/cluster/

## bench: Go benchmarks and the load drivers; they print figures (as root also
## the LoadBalancer ones: 500 Services created at once, 100 addresses failing over,
## and e2e/faults' long form: an upgrade from an earlier commit, then every fault three times over)
bench: build kwok
	go test -run '^$$' -bench . -benchmem ./api/... ./apiserver/... ./scheduler/...
	go test -run '^$$' -bench . -benchtime 1x -timeout 60m ./proxy/internal/benchmark/
	go test -run '^$$' -bench . -benchtime 1x -timeout 10m ./netpol/internal/benchmark/
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) ./e2e/bench/run-apiload.sh
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) go test -count=1 -run '^$$' -bench 'PodStartup|DashboardLogLine' -benchtime=1x -timeout 30m ./e2e/kubelet/
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) go test -count=1 -run '^$$' -bench BenchmarkDashboard5000Pods -benchtime=3x -timeout 20m ./e2e/dashboard/
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) go test -count=1 -run '^$$' -bench 'BenchmarkGCDependents10000|BenchmarkEndpointSliceChurn|BenchmarkDeploymentRollout1000' -benchtime=1x -timeout 30m ./e2e/controllermanager/
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) ./e2e/bench/run-schedload.sh
	@if [ "$$(id -u)" = 0 ]; then TRIREME_BIN_DIR=$(CURDIR)/$(BIN) go test -count=1 -run '^$$' -bench 'BenchmarkLoadBalancer500|BenchmarkAnnounceFailover100' -benchtime=1x -timeout 30m ./e2e/cloudcontrollermanager/; fi
	@if [ "$(E2E_CLUSTER)" = 1 ]; then $(MAKE) --no-print-directory bench-faults bench-cluster; fi

# bench-faults: e2e/faults' long form: the cluster installed by an earlier
# commit's build (UPGRADE_FROM, built by hack/build-earlier.sh), upgraded to
# this build under the write load, then every fault three times over; then,
# on a cluster of its own, a snapshot of a 1 GiB etcd under the write load.
# UPGRADE_FROM is the first commit whose kubelet gives a replaced static
# pod's new mirror pod its status: upgrade does not replace the kubelet, and
# with an earlier one each replaced component waits long for its mirror.
UPGRADE_FROM ?= 1d9f062
bench-faults: build images
	TRIREME_E2E_UPGRADE_FROM=$$(./hack/build-earlier.sh $(UPGRADE_FROM)) $(MAKE) --no-print-directory e2e-faults FAULTS_ROUNDS=3
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) TRIREME_E2E_FAULTS=1 go test $(TEST_FLAGS) -count=1 -v -run '^TestHAControlPlane$$' -bench Snapshot1GB -benchtime 1x -timeout 40m ./e2e/faults/

# bench-cluster: load drivers on a cluster triremeadm installs on this machine
# (as e2e-cluster, it takes the host's ports): kubectl top pods -A with 500 pods,
# Traefik against a direct load and with 1,000 Ingresses (BenchmarkIngress),
# and pod-to-pod TCP throughput for 10 s through VXLAN and host-gw against the
# nodes' own addresses (on the suite's two workers).
bench-cluster: build images helm
	TRIREME_BIN_DIR=$(CURDIR)/$(BIN) TRIREME_E2E_CLUSTER=1 TRIREME_E2E_PERF_DURATION=10s go test -count=1 -v \
		-run '^(TestWorkload|TestMultiNode|TestPodNetworkThroughput)$$' -bench 'TopPods|Ingress' -benchtime=10x -timeout 25m ./e2e/cluster/

## bench-scale: e2e/scale at issue 29's size, Trireme's control plane then upstream's
## (components built by hack/build-upstream.sh) on kwok's fake nodes, printing the figures
## side by side. SCALE_NODES, SCALE_PODS, SCALE_NAMESPACES, SCALE_WATCHERS and
## SCALE_CONTROL_PLANES (trireme,upstream) override; GOGC/GOMEMLIMIT reach every component.
SCALE_NODES ?= 1000
SCALE_PODS ?= 30000
SCALE_NAMESPACES ?= 100
SCALE_CONTROL_PLANES ?= trireme,upstream
bench-scale: build kwok
	@if echo "$(SCALE_CONTROL_PLANES)" | grep -q upstream; then ./hack/build-upstream.sh kube-apiserver kube-controller-manager kube-scheduler; fi
	TRIREME_E2E_SCALE=1 TRIREME_BIN_DIR=$(CURDIR)/$(BIN) SCALE_NODES=$(SCALE_NODES) SCALE_PODS=$(SCALE_PODS) SCALE_NAMESPACES=$(SCALE_NAMESPACES) \
		SCALE_CONTROL_PLANES=$(SCALE_CONTROL_PLANES) SCALE_KWOK=$(CURDIR)/$(BIN)/kwok go test $(TEST_FLAGS) -count=1 -v -run '^TestScale$$' -timeout 180m ./e2e/scale/

## kwok: fake nodes for e2e/scale and the dashboard's benchmark, built from sigs.k8s.io/kwok's module (never downloaded)
kwok:
	./hack/build-kwok.sh

## conformance: upstream's [Conformance] specs against KUBECONFIG (make up's by default):
## e2e.test, ginkgo, kubectl and the test images of the libraries' Kubernetes release
## built from Go modules and Debian packages (nothing pulled) and imported into
## containerd, then the non-[Serial] specs in parallel and the [Serial] ones; reports in
## _output/conformance/results (CONFORMANCE_FOCUS=<regexp> runs a subset; see hack/conformance.sh)
conformance:
	./hack/conformance.sh

## conformance-netpol: the network-policy-api project's own conformance suite
## (ClusterNetworkPolicy) against KUBECONFIG (make up's by default), built from the
## Go module netpol/go.mod requires, its agnhost image built and imported as
## make conformance's; SCTP cases skipped (no SCTP in this kernel); results in
## _output/netpol-conformance/results (see hack/netpol-conformance.sh)
conformance-netpol:
	./hack/netpol-conformance.sh

## conformance-gateway: the Gateway API conformance suite (GATEWAY-HTTP profile) on
## the addons' GatewayClass traefik against KUBECONFIG (make up's by default), built
## from sigs.k8s.io/gateway-api/conformance at the version images/traefik requires,
## its echo-basic and coredns images built and imported as make conformance's;
## each test's result, core and extended counts and features printed; results in
## _output/gateway-conformance/results (see hack/gateway-conformance.sh)
conformance-gateway:
	./hack/gateway-conformance.sh

# conformance-build: e2e.test, ginkgo and kubectl of the libraries' release
# (nothing when built already), for e2e-cluster's conformance subset.
conformance-build:
	./hack/conformance.sh build

## generate: regenerate generated code
generate:
	./hack/update-codegen.sh

## verify: gofmt, vet, staticcheck, generated code, module graph and versions
verify:
	./hack/verify.sh

## fix: repair what verify finds (gofmt, codegen, go mod tidy)
fix:
	./hack/fix.sh

## check: what CI runs — verify, test and e2e
check: verify test e2e

## run: a dev-mode control plane (apiserver + controller-manager) in _output/dev
## (KUBECONFIG=_output/dev/admin.kubeconfig)
run: build
	./hack/run-dev.sh

## up: a ready single-node cluster on this machine (root): packages, build, images,
## triremeadm init --single-node (UP_FLAGS adds init flags); prints the kubectl line.
## WORKERS=N adds N worker nodes in network namespaces (trireme-nodes up N);
## UP_DISK_PRESSURE=off: no disk-pressure eviction nor image GC, as kind's nodes
WORKERS ?= 0
up:
	WORKERS=$(WORKERS) ./hack/up.sh

## down: the worker nodes' removal (trireme-nodes down), then triremeadm reset -f
## (stops what up started, removes its files and rules), then the LoadBalancer
## bridge trireme-lb0 and the cloud config up wrote (hack/lbnet.sh down)
down: $(BIN)/trireme-nodes
	$(BIN)/trireme-nodes down
	$(BIN)/triremeadm reset -f
	./hack/lbnet.sh down

# make up's worker nodes of network namespaces (e2e/internal/workernodes).
$(BIN)/trireme-nodes: FORCE
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $@ ./e2e/cmd/trireme-nodes

clean:
	rm -rf _output

FORCE:

include images/images.mk

# triremeadm's default version is the one it installs: `make images` alone
# would otherwise leave one built at an older commit asking for images that
# are no longer there.
images: $(BIN)/triremeadm
