#!/usr/bin/env bash
# conformance.sh runs upstream Kubernetes' own conformance suite (the
# [Conformance] specs of k8s.io/kubernetes/test/e2e) against the cluster of
# $KUBECONFIG, with nothing pulled from the internet:
#
#   hack/conformance.sh [all|build|images|check|run]     (default all)
#
#   build   e2e.test, the ginkgo CLI and kubectl of the Kubernetes release the
#           repository's libraries are at, and the test images' own binaries,
#           into _output/conformance/ (built in a throw-away module, as
#           hack/build-upstream.sh builds upstream's components; nothing of
#           k8s.io/kubernetes is imported by Trireme). Skipped when built at
#           that release already.
#   images  every image the [Conformance] specs use, under the names upstream
#           publishes (e2e.test --list-images), as docker-archives written by
#           _output/bin/image-build from Go modules and Debian packages, then
#           imported into containerd's k8s.io namespace, on the host and on
#           every worker node of `make up WORKERS=N`. Images already there are
#           left alone.
#   check   every image present on every node, and the cluster's nodes Ready.
#           On a disk over 80 % used the kubelets' image GC removes the
#           imported images again: run the cluster with
#           `make up UP_DISK_PRESSURE=off` there.
#   run     the non-[Serial] specs with ginkgo in parallel, then the [Serial]
#           ones alone ([Disruptive] left out), with the images also served
#           as registry.k8s.io's mirror (_output/bin/image-registry, named in
#           each node's /etc/containerd/certs.d) for pods that pull them
#           (imagePullPolicy Always, image volumes); JUnit reports in
#           _output/conformance/results/; prints "N passed, N failed,
#           N skipped" and exits non-zero when a spec failed.
#
# Environment:
#   KUBECONFIG           the cluster (default /etc/trireme/admin.conf, make up's)
#   CONFORMANCE_FOCUS    regexp replacing the default focus '\[Conformance\]'
#   CONFORMANCE_SKIP     regexp of specs to leave out besides [Disruptive]
#   CONFORMANCE_LIST     a file of whole spec names, one per line (# comments),
#                        run instead of a focus (hack/conformance-ci.txt is CI's)
#   CONFORMANCE_IMAGES   regexp of the image references to build, import and
#                        check (default: every one the [Conformance] specs use)
#   CONFORMANCE_EXTRA_IMAGES  image references to build, import and check
#                        besides those, space-separated, each of an image this
#                        script has a recipe for (other suites' workloads, such
#                        as hack/netpol-conformance.sh's agnhost:2.45 and
#                        hack/gateway-conformance.sh's echo-basic and coredns)
#   CONFORMANCE_PROCS    ginkgo processes for the non-[Serial] specs (default 4)
#   CONFORMANCE_TIMEOUT  ginkgo --timeout of each of the two runs (default 4h)
#   CONFORMANCE_REBUILD  1 rebuilds the binaries, images and archives anyway
#   CONFORMANCE_REGISTRY_PORT  the mirror's port on the API server's address
#                        (default 5050)
#   CONTAINERD_ADDRESS   the host's containerd socket, as ctr reads it
#   TRIREME_NODES_DIR    the worker nodes' roots (default /var/lib/trireme-nodes,
#                        trireme-nodes'); each node's containerd socket is
#                        <root>/run/containerd/containerd.sock
set -euo pipefail
# shellcheck source-path=SCRIPTDIR

source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/upstream.sh"
source "${REPO_ROOT}/hack/lib/debroot.sh"

OUT="${REPO_ROOT}/_output/conformance"
# The test images' binaries and laid-out trees, and the Debian packages.
IMAGE_BIN="${OUT}/image-bin"
ROOTFS="${OUT}/rootfs"
ARCHIVES="${OUT}/images"
DEBS="${OUT}/debs"
RESULTS="${OUT}/results"
IMAGE_BUILD="${REPO_ROOT}/_output/bin/image-build"
REBUILD="${CONFORMANCE_REBUILD:-0}"
export KUBECONFIG="${KUBECONFIG:-/etc/trireme/admin.conf}"

log() { echo "conformance: $*" >&2; }
die() {
  log "$*"
  exit 1
}

# The packages built in the throw-away module: the suite and its driver, the
# kubectl its kubectl specs run, and the binaries of the test images.
declare -A GO_PACKAGES=(
  [e2e.test]=k8s.io/kubernetes/test/e2e
  [ginkgo]=github.com/onsi/ginkgo/v2/ginkgo
  [kubectl]=k8s.io/kubernetes/cmd/kubectl
  [image-bin/agnhost]=k8s.io/kubernetes/test/images/agnhost
  [image-bin/nnp]=k8s.io/kubernetes/test/images/nonewprivs
  [image-bin/sample-apiserver]=k8s.io/sample-apiserver
)

conformance::build() {
  local version out p work kdir
  version="$(trireme::upstream_version)"
  if [[ "${REBUILD}" != 1 && -f "${OUT}/VERSION" && "$(<"${OUT}/VERSION")" == "${version}" ]]; then
    local absent=0
    for out in "${!GO_PACKAGES[@]}"; do
      [[ -x "${OUT}/${out}" ]] || absent=1
    done
    if ((absent == 0)); then
      log "e2e.test, ginkgo, kubectl and the image binaries are at ${version}"
      return
    fi
  fi
  log "building k8s.io/kubernetes ${version}: ${!GO_PACKAGES[*]}"
  work="$(mktemp -d "${TMPDIR:-/tmp}/conformance-build.XXXXXX")"
  # shellcheck disable=SC2064 # the directory is known now
  trap "rm -rf '${work}'" EXIT
  trireme::upstream_module "${work}" "${version}" "${GO_PACKAGES[@]}"
  kdir="$(trireme::upstream_dir "${version}")"
  mkdir -p "${OUT}/image-bin"
  rm -f "${OUT}/VERSION"
  local minor="${version#v1.}"
  minor="${minor%%.*}"
  local ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${p}.gitVersion=${version} -X ${p}.gitMajor=1 -X ${p}.gitMinor=${minor} -X ${p}.gitTreeState=clean"
  done
  # -mod=mod: go mod tidy leaves out what only the tests of a dependency
  # (e2e's e2e_test.go) import; the throw-away module may record it.
  local gobuild=(env -C "${work}" GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 go)
  for out in "${!GO_PACKAGES[@]}"; do
    p="${GO_PACKAGES[${out}]}"
    if [[ "${out}" == e2e.test ]]; then
      "${gobuild[@]}" test -c -vet=off -trimpath -ldflags "${ldflags}" -o "${OUT}/${out}" "${p}"
    else
      "${gobuild[@]}" build -trimpath -ldflags "${ldflags}" -o "${OUT}/${out}" "${p}"
    fi
  done
  # The test images' data files, from the same release.
  rm -rf "${OUT}/image-src"
  mkdir -p "${OUT}/image-src"
  for p in kitten nautilus agnhost/porter; do
    mkdir -p "${OUT}/image-src/${p}"
    cp -r "${kdir}/test/images/${p}/." "${OUT}/image-src/${p}/"
  done
  chmod -R u+w "${OUT}/image-src"
  echo "${version}" >"${OUT}/VERSION"
  # Done with it: the run step (after this one in `all`) sets a trap of its own.
  rm -rf "${work}"
  trap - EXIT
  "${OUT}/kubectl" version --client
  "${OUT}/ginkgo" version
}

# conformance::needed_images prints the images of `e2e.test --list-images`
# that [Conformance] specs run and this script builds: the others (node
# performance, storage servers, an unreachable registry's) are for other specs.
# CONFORMANCE_EXTRA_IMAGES are added, whatever CONFORMANCE_IMAGES says.
conformance::needed_images() {
  local ref
  for ref in ${CONFORMANCE_EXTRA_IMAGES:-}; do
    [[ -n "$(conformance::recipe "${ref}")" ]] || die "CONFORMANCE_EXTRA_IMAGES: no recipe for ${ref}"
  done
  {
    # The loop's status is its last test's: an image without a recipe listed
    # last must not fail the function under errexit and pipefail.
    "${OUT}/e2e.test" --list-images | while IFS= read -r ref; do
      if [[ -n "$(conformance::recipe "${ref}")" ]] && [[ "${ref}" =~ ${CONFORMANCE_IMAGES:-.} ]]; then echo "${ref}"; fi
    done
    for ref in ${CONFORMANCE_EXTRA_IMAGES:-}; do echo "${ref}"; done
  } | LC_ALL=C sort -u
}

# conformance::recipe prints the function that builds image <ref>, or nothing.
conformance::recipe() {
  local ref="$1" repo
  repo="${ref%:*}"
  case "${repo}" in
  registry.k8s.io/e2e-test-images/agnhost) echo image::agnhost ;;
  registry.k8s.io/e2e-test-images/busybox) echo image::busybox ;;
  registry.k8s.io/e2e-test-images/nginx) echo image::nginx ;;
  registry.k8s.io/e2e-test-images/nonroot) echo image::nonroot ;;
  registry.k8s.io/e2e-test-images/nonewprivs) echo image::nonewprivs ;;
  registry.k8s.io/e2e-test-images/kitten) echo image::kitten ;;
  registry.k8s.io/e2e-test-images/nautilus) echo image::nautilus ;;
  registry.k8s.io/e2e-test-images/sample-apiserver) echo image::sample_apiserver ;;
  registry.k8s.io/e2e-test-images/glibc-dns-testing) echo image::glibc_dns_testing ;;
  registry.k8s.io/pause) echo image::pause ;;
  registry.k8s.io/etcd) echo image::etcd ;;
  registry.k8s.io/gateway-api/echo-basic) echo image::echo_basic ;;
  registry.k8s.io/coredns/coredns) echo image::gateway_coredns ;;
  esac
}

# A recipe changed since its image was first imported under that name has a
# revision above 1: the archive of an older recipe is not reused, and an image
# a node imported from one (its revision label lower, or none) is built and
# imported again.
declare -A RECIPE_REVISION=(
  [image::busybox]=3 # busybox's ash as sh, built to keep variables whose names are no shell names
)
REVISION_LABEL=trireme.dev/conformance-revision

# revision prints the revision of the recipe of image <ref>.
revision() { echo "${RECIPE_REVISION[$(conformance::recipe "$1")]:-1}"; }

# archive_name turns an image reference into a file name.
archive_name() {
  local rev
  rev="$(revision "$1")"
  if ((rev > 1)); then echo "${1//[\/:]/_}.r${rev}.tar"; else echo "${1//[\/:]/_}.tar"; fi
}

# node_roots prints the root of every node: the host's (empty: /), then each
# worker node's whose containerd is up.
node_roots() {
  echo ""
  local s
  for s in "${TRIREME_NODES_DIR:-/var/lib/trireme-nodes}"/*/run/containerd/containerd.sock; do
    [[ -S "${s}" ]] && echo "${s%/run/containerd/containerd.sock}"
  done
  return 0
}

# sockets prints the containerd socket of every node: the host's (empty: ctr's
# default or CONTAINERD_ADDRESS), then each worker node's below its root.
sockets() {
  local root
  while IFS= read -r root; do
    if [[ -z "${root}" ]]; then echo ""; else echo "${root}/run/containerd/containerd.sock"; fi
  done < <(node_roots)
}

# The run's registry mirror. Specs whose pods pull (imagePullPolicy Always,
# image volumes) must reach registry.k8s.io, which this machine cannot: the
# images built here are served by _output/bin/image-registry, and each
# node's containerd takes it as registry.k8s.io's mirror through a hosts.toml
# in its config_path (/etc/containerd/certs.d, which triremeadm sets).
MIRROR_HOST=registry.k8s.io
MIRROR_MARK="# Written by hack/conformance.sh for its run; removed when the run ends."
MIRROR_PID=""
MIRROR_FILES=()

# mirror_start serves every image the specs use on the cluster's API server
# address (every node reaches it), port CONFORMANCE_REGISTRY_PORT, and points
# each node's containerd at it.
mirror_start() {
  local server ip port="${CONFORMANCE_REGISTRY_PORT:-5050}" ref root conf dir file n=0
  local archives=()
  local roots=()
  while IFS= read -r root; do
    conf="${root}/etc/trireme/containerd/config.toml"
    if grep -q '^[[:space:]]*config_path' "${conf}" 2>/dev/null; then
      roots+=("${root}")
    else
      log "${conf} has no registry config_path (not make up's cluster, or one of an older triremeadm): pulls there go to ${MIRROR_HOST}"
    fi
  done < <(node_roots)
  if ((${#roots[@]} == 0)); then
    log "no node takes a registry mirror: none started"
    return
  fi
  server="$("${OUT}/kubectl" --kubeconfig "${KUBECONFIG}" config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
  ip="${server#https://}"
  ip="${ip%:*}"
  [[ -n "${ip}" ]] || die "no API server address in ${KUBECONFIG} for the registry mirror"
  while IFS= read -r ref; do
    archives+=("${ARCHIVES}/$(archive_name "${ref}")")
  done < <(conformance::needed_images)
  make -C "${REPO_ROOT}" --no-print-directory _output/bin/image-registry >/dev/null
  rm -rf "${OUT}/registry"
  "${REPO_ROOT}/_output/bin/image-registry" --listen "${ip}:${port}" --dir "${OUT}/registry" "${archives[@]}" \
    >"${RESULTS}/registry.log" 2>&1 &
  MIRROR_PID=$!
  trap mirror_stop EXIT
  until grep -q '^image-registry: serving' "${RESULTS}/registry.log"; do
    kill -0 "${MIRROR_PID}" 2>/dev/null || die "image-registry ended: $(cat "${RESULTS}/registry.log")"
    sleep 1
  done
  for root in "${roots[@]}"; do
    dir="${root}/etc/containerd/certs.d/${MIRROR_HOST}"
    file="${dir}/hosts.toml"
    if [[ -f "${file}" ]] && ! grep -qxF "${MIRROR_MARK}" "${file}"; then
      log "kept ${file}, which is not this script's: no mirror there"
      continue
    fi
    mkdir -p "${dir}"
    printf '%s\nserver = "https://%s"\n\n[host."http://%s:%s"]\n  capabilities = ["pull", "resolve"]\n' \
      "${MIRROR_MARK}" "${MIRROR_HOST}" "${ip}" "${port}" >"${file}"
    MIRROR_FILES+=("${file}")
    n=$((n + 1))
  done
  log "registry mirror of ${MIRROR_HOST} at http://${ip}:${port} (${#archives[@]} images) for ${n} node(s)"
}

# mirror_stop stops the mirror (by its PID) and removes the hosts.toml files
# mirror_start wrote.
mirror_stop() {
  local file
  for file in "${MIRROR_FILES[@]}"; do
    rm -f "${file}"
    rmdir "$(dirname "${file}")" 2>/dev/null || true
  done
  MIRROR_FILES=()
  if [[ -n "${MIRROR_PID}" ]]; then
    kill "${MIRROR_PID}" 2>/dev/null || true
    wait "${MIRROR_PID}" 2>/dev/null || true
    MIRROR_PID=""
  fi
  rm -rf "${OUT}/registry"
}

# ctr_at <socket> <args>... runs ctr against a node's containerd.
ctr_at() {
  local s="$1"
  shift
  if [[ -n "${s}" ]]; then ctr --address "${s}" "$@"; else ctr "$@"; fi
}

# imported <socket> prints the image references in a node's containerd's
# k8s.io namespace, each with the revision of the recipe it was imported from.
imported() {
  ctr_at "$1" -n k8s.io images ls | awk -v label="${REVISION_LABEL}" 'NR > 1 {
    rev = 1
    if (match($0, label "=[0-9]+")) rev = substr($0, RSTART + length(label) + 1, RLENGTH - length(label) - 1)
    print $1, rev
  }'
}

conformance::images() {
  [[ -x "${OUT}/e2e.test" ]] || die "${OUT}/e2e.test missing: hack/conformance.sh build"
  make -C "${REPO_ROOT}" --no-print-directory _output/bin/image-build _output/bin/pause _output/bin/etcd >/dev/null
  export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "${REPO_ROOT}" log -1 --format=%ct 2>/dev/null || echo 0)}"
  mkdir -p "${ARCHIVES}" "${ROOTFS}"
  local refs sock have ref archive where loaded present ctr_up
  refs="$(conformance::needed_images)"
  while IFS= read -r sock; do
    where="${sock:-the host}"
    loaded=0 present=0 ctr_up=1
    # Without containerd (no cluster yet) the archives are still written.
    have="$(imported "${sock}" 2>/dev/null)" || ctr_up=0
    while IFS= read -r ref; do
      archive="${ARCHIVES}/$(archive_name "${ref}")"
      if [[ "${REBUILD}" != 1 ]] && grep -qxF "${ref} $(revision "${ref}")" <<<"${have}"; then
        present=$((present + 1))
        continue
      fi
      if [[ ! -f "${archive}" || ("${REBUILD}" == 1 && -z "${sock}") ]]; then
        log "building ${ref}"
        "$(conformance::recipe "${ref}")" "${ref}" "${archive}.tmp" >/dev/null
        mv "${archive}.tmp" "${archive}"
      fi
      ((ctr_up == 1)) || continue
      ctr_at "${sock}" -n k8s.io images import "${archive}" >/dev/null
      if (($(revision "${ref}") > 1)); then
        ctr_at "${sock}" -n k8s.io images label "${ref}" "${REVISION_LABEL}=$(revision "${ref}")" >/dev/null
      fi
      log "imported ${ref} (${where})"
      loaded=$((loaded + 1))
    done <<<"${refs}"
    if ((ctr_up == 0)); then
      log "containerd of ${where} not reachable: archives written to ${ARCHIVES}, none imported"
      continue
    fi
    log "images on ${where}: ${loaded} imported, ${present} already present"
  done < <(sockets)
}

# The rootfs helpers lay a tree out once per run of the script.
declare -A ROOTFS_DONE=()

# rootfs_agnhost: upstream's agnhost image is Alpine with agnhost and the
# tools its subcommands and the specs' shell snippets run (dig, nslookup,
# curl, nc, ip, socat, iperf, bash, getent), its test certificate and the
# user and group some specs find in the image's /etc/passwd and /etc/group.
# Debian's packages give the same tools; busybox the rest of a shell's.
rootfs_agnhost() {
  local dir="${ROOTFS}/agnhost"
  [[ -n "${ROOTFS_DONE[agnhost]:-}" ]] && return
  trireme::debroot "${dir}" "${DEBS}" dash bash bind9-dnsutils bind9-host curl netcat-openbsd iproute2 socat iperf
  # Debian makes sh and nc alternatives in maintainer scripts, which dpkg -x
  # skips. sh must not be Debian's busybox: its shell runs its own applets
  # before the PATH's (busybox's ip and nc instead of iproute2's and netcat's).
  ln -sf dash "${dir}/bin/sh"
  ln -sf nc.openbsd "${dir}/bin/nc"
  trireme::busybox_into "${dir}"
  mkdir -p "${dir}/uploads" "${dir}/tmp" "${dir}/home/user-defined-in-image" "${dir}/etc"
  chmod 1777 "${dir}/tmp"
  cp "${OUT}/image-src/agnhost/porter/localhost.crt" "${OUT}/image-src/agnhost/porter/localhost.key" "${dir}/"
  cp "${IMAGE_BIN}/agnhost" "${dir}/agnhost"
  ln -sf agnhost "${dir}/agnhost-2"
  # Upstream's coredns binary, for the DNS specs that run a server from the image.
  if [[ -x "${REPO_ROOT}/_output/bin/coredns" ]]; then
    cp "${REPO_ROOT}/_output/bin/coredns" "${dir}/coredns"
  fi
  cat >"${dir}/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh
EOF
  cat >"${dir}/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
user-defined-in-image:x:1000:
group-defined-in-image:x:50000:user-defined-in-image
EOF
  echo 'hosts: files dns' >"${dir}/etc/nsswitch.conf"
  ROOTFS_DONE[agnhost]=1
}

# rootfs_busybox: a busybox tree laid out as upstream's busybox image is,
# with busybox_build's busybox: its sh (ash) hands the commands it runs the
# variables whose names are no shell names (envFrom's data-1, or keys under
# prefixes such as "1-" and "#@!", which the ConfigMap and Secret specs print
# with `sh -c env`), as upstream's does and Debian's busybox-static does not.
rootfs_busybox() {
  local dir="${ROOTFS}/busybox"
  [[ -n "${ROOTFS_DONE[busybox]:-}" ]] && return
  rm -rf "${dir}"
  mkdir -p "${dir}/etc" "${dir}/tmp" "${dir}/root" "${dir}/home" "${dir}/var"
  chmod 1777 "${dir}/tmp"
  chmod 0700 "${dir}/root"
  local bb
  bb="$(busybox_build)"
  trireme::busybox_into "${dir}" "${bb}"
  # Upstream's image has every applet in /bin, /sbin's too: the Sysctls
  # spec runs /bin/sysctl.
  local a
  while IFS= read -r a; do
    [[ -e "${dir}/bin/${a}" || -L "${dir}/bin/${a}" ]] || ln -s busybox "${dir}/bin/${a}"
  done < <("${dir}/bin/busybox" --list)
  cp "${REPO_ROOT}/images/rootfs/busybox/etc/passwd" "${REPO_ROOT}/images/rootfs/busybox/etc/group" "${dir}/etc/"
  ROOTFS_DONE[busybox]=1
}

# busybox_build prints the path of a static busybox built from Debian's
# busybox source package: every Debian patch and the busybox-static
# configuration, with one option changed. FEATURE_DI_ENV_HACK, which Debian's
# installer flavour turns on, has ash keep environment variables whose names
# are no shell names (envFrom gives pods such as data-1) and pass them on, as
# upstream's busybox does and the envFrom specs check; Debian's other builds
# drop them. sh is then ash, whose messages the specs check too ("/bin/sh:
# can't create /file: Read-only file system"). Built once, kept in IMAGE_BIN.
busybox_build() {
  local out="${IMAGE_BIN}/busybox" src work tree p version cached
  if [[ -x "${out}" && "${REBUILD}" != 1 ]]; then
    echo "${out}"
    return
  fi
  # Kept outside the tree too, by the Debian version built, so that a new
  # clone (CI's) does not build it again: a build takes minutes here.
  version="$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null || echo unknown)"
  cached="${XDG_CACHE_HOME:-${HOME}/.cache}/trireme/busybox-${version}-di-env/busybox"
  if [[ -x "${cached}" && "${REBUILD}" != 1 ]]; then
    mkdir -p "${IMAGE_BIN}"
    cp "${cached}" "${out}"
    echo "${out}"
    return
  fi
  command -v gcc >/dev/null || die "gcc missing for the busybox image: hack/install-deps.sh"
  src="$(trireme::debsource "${DEBS}" busybox)" || exit 1
  work="$(mktemp -d)"
  tar -xf "$(compgen -G "${src}/busybox_*.orig.tar.*")" -C "${work}"
  tree="$(compgen -G "${work}/busybox-*")"
  tar -xf "$(compgen -G "${src}/busybox_*.debian.tar.*")" -C "${tree}"
  while IFS= read -r p; do
    patch -d "${tree}" -p1 -s <"${tree}/debian/patches/${p}" || die "busybox: Debian's patch ${p} does not apply"
  done < <(grep -v -e '^#' -e '^[[:space:]]*$' "${tree}/debian/patches/series")
  sed 's/^# CONFIG_FEATURE_DI_ENV_HACK is not set$/CONFIG_FEATURE_DI_ENV_HACK=y/' \
    "${tree}/debian/config/pkg/static" >"${tree}/.config"
  grep -qx 'CONFIG_FEATURE_DI_ENV_HACK=y' "${tree}/.config" || die "busybox: no FEATURE_DI_ENV_HACK in Debian's static configuration"
  log "building busybox from Debian's source package (static, FEATURE_DI_ENV_HACK)"
  make -C "${tree}" -s oldconfig </dev/null >/dev/null
  make -C "${tree}" -s -j"$(nproc)" busybox SKIP_STRIP=y >"${work}/build.log" 2>&1 ||
    die "busybox build failed: $(tail -n 20 "${work}/build.log")"
  mkdir -p "${IMAGE_BIN}" "$(dirname "${cached}")"
  cp "${tree}/busybox" "${out}.tmp"
  mv "${out}.tmp" "${out}"
  cp "${out}" "${cached}.tmp"
  mv "${cached}.tmp" "${cached}"
  rm -rf "${work}"
  echo "${out}"
}

image::agnhost() {
  rootfs_agnhost
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${ROOTFS}/agnhost" \
    --entrypoint /agnhost --cmd pause
}

image::busybox() {
  rootfs_busybox
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${ROOTFS}/busybox" --cmd sh
}

# kitten and nautilus are agnhost serving a picture and data.json from /.
image::kitten() { webserver_image kitten "$@"; }
image::nautilus() { webserver_image nautilus "$@"; }
webserver_image() {
  local name="$1"
  rootfs_agnhost
  "${IMAGE_BUILD}" --name "$2" --out "$3" --base-dir "${ROOTFS}/agnhost" \
    --file "${OUT}/image-src/${name}/html/${name}.jpg=/${name}.jpg:0644" \
    --file "${OUT}/image-src/${name}/html/data.json=/data.json:0644" \
    --entrypoint /agnhost --cmd test-webserver
}

# nginx: Debian's nginx serving /usr/share/nginx/html on port 80 in the
# foreground, as upstream's (nginx:alpine) does; the StatefulSet specs break
# and mend readiness by moving its index.html with the image's shell tools.
image::nginx() {
  local dir="${ROOTFS}/nginx"
  if [[ -z "${ROOTFS_DONE[nginx]:-}" ]]; then
    trireme::debroot "${dir}" "${DEBS}" nginx dash
    ln -sf dash "${dir}/bin/sh"
    trireme::busybox_into "${dir}"
    mkdir -p "${dir}/var/lib/nginx" "${dir}/var/log/nginx" "${dir}/var/cache/nginx" "${dir}/run" "${dir}/tmp"
    chmod 1777 "${dir}/tmp"
    cat >"${dir}/etc/nginx/nginx.conf" <<'EOF'
user www-data;
worker_processes auto;
error_log /dev/stderr notice;
pid /run/nginx.pid;
events {
    worker_connections 1024;
}
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /dev/stdout;
    sendfile on;
    keepalive_timeout 65;
    server {
        listen 80;
        server_name localhost;
        root /usr/share/nginx/html;
        index index.html index.htm;
    }
}
EOF
    cat >"${dir}/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
www-data:x:33:33:www-data:/var/www:/bin/false
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
    cat >"${dir}/etc/group" <<'EOF'
root:x:0:
www-data:x:33:
nogroup:x:65534:
EOF
    ROOTFS_DONE[nginx]=1
  fi
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${dir}" \
    --cmd nginx --cmd -g --cmd 'daemon off;'
}

# nonroot: a shell image whose default user is 1234 (upstream's USER 1234).
image::nonroot() {
  rootfs_busybox
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${ROOTFS}/busybox" --user 1234 --cmd sh
}

# nonewprivs: upstream's nnp, setuid root, prints its effective uid; the
# specs run it as a non-root user with and without allowPrivilegeEscalation.
image::nonewprivs() {
  rootfs_busybox
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${ROOTFS}/busybox" \
    --file "${IMAGE_BIN}/nnp=/usr/local/bin/nnp:4755" --cmd nnp
}

image::sample_apiserver() {
  rootfs_busybox
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${ROOTFS}/busybox" \
    --file "${IMAGE_BIN}/sample-apiserver=/sample-apiserver:0755" --entrypoint /sample-apiserver
}

# glibc-dns-testing: Debian with dig and glibc's getent, for the DNS specs'
# glibc resolver probes.
image::glibc_dns_testing() {
  local dir="${ROOTFS}/glibc-dns-testing"
  if [[ -z "${ROOTFS_DONE[glibc]:-}" ]]; then
    trireme::debroot "${dir}" "${DEBS}" bind9-dnsutils bind9-host dash coreutils
    ln -sf dash "${dir}/bin/sh"
    trireme::busybox_into "${dir}"
    mkdir -p "${dir}/tmp"
    chmod 1777 "${dir}/tmp"
    if [[ -x "${REPO_ROOT}/_output/bin/coredns" ]]; then
      cp "${REPO_ROOT}/_output/bin/coredns" "${dir}/coredns"
    fi
    cp "${REPO_ROOT}/images/rootfs/busybox/etc/passwd" "${REPO_ROOT}/images/rootfs/busybox/etc/group" "${dir}/etc/"
    echo 'hosts: files dns' >"${dir}/etc/nsswitch.conf"
    ROOTFS_DONE[glibc]=1
  fi
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${dir}" --cmd /bin/bash
}

# pause: the repository's, as the node's sandbox image (uid 65535, as upstream's).
image::pause() {
  "${IMAGE_BUILD}" --name "$1" --out "$2" \
    --file "${REPO_ROOT}/_output/bin/pause=/pause:0755" --entrypoint /pause --user 65535:65535
}

# etcd: the repository's etcd build at upstream's path; the aggregator spec
# runs it beside the sample API server.
image::etcd() {
  rootfs_busybox
  "${IMAGE_BUILD}" --name "$1" --out "$2" --base-dir "${ROOTFS}/busybox" \
    --file "${REPO_ROOT}/_output/bin/etcd=/usr/local/bin/etcd:0755" --entrypoint /usr/local/bin/etcd
}

# echo-basic: the Gateway API conformance suite's backend, built by
# hack/gateway-conformance.sh from the suite's module; upstream's image is the
# binary alone on distroless, run as its nonroot user.
image::echo_basic() {
  local bin="${REPO_ROOT}/_output/gateway-conformance/echo-basic"
  [[ -x "${bin}" ]] || die "${bin} missing: hack/gateway-conformance.sh build"
  "${IMAGE_BUILD}" --name "$1" --out "$2" \
    --file "${bin}=/echo-basic:0755" --entrypoint /echo-basic --user 65532:65532
}

# coredns, as the Gateway API suite's base workloads run it (-conf with a
# Corefile of errors, log, forward and whoami): the CoreDNS build of
# hack/gateway-conformance.sh, at the repository's CoreDNS version. It runs
# as root, so that the NET_BIND_SERVICE the pod adds binds :53 (upstream's
# image sets that capability on its file).
image::gateway_coredns() {
  local bin="${REPO_ROOT}/_output/gateway-conformance/coredns"
  [[ -x "${bin}" ]] || die "${bin} missing: hack/gateway-conformance.sh build"
  "${IMAGE_BUILD}" --name "$1" --out "$2" \
    --file "${bin}=/coredns:0755" --entrypoint /coredns
}

conformance::check() {
  [[ -x "${OUT}/e2e.test" ]] || die "${OUT}/e2e.test missing: hack/conformance.sh build"
  local refs sock have ref absent=0
  refs="$(conformance::needed_images)"
  while IFS= read -r sock; do
    have="$(imported "${sock}")" || die "cannot list the images of containerd ${sock:-of the host} (is containerd running? CONTAINERD_ADDRESS?)"
    while IFS= read -r ref; do
      if ! grep -qxF "${ref} $(revision "${ref}")" <<<"${have}"; then
        log "image ${ref} (revision $(revision "${ref}")) missing on ${sock:-the host}: hack/conformance.sh images"
        absent=1
      fi
    done <<<"${refs}"
  done < <(sockets)
  ((absent == 0)) || exit 1
  [[ -r "${KUBECONFIG}" ]] || die "KUBECONFIG ${KUBECONFIG} not readable"
  local k=("${OUT}/kubectl" --kubeconfig "${KUBECONFIG}")
  local notready
  notready="$("${k[@]}" get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')" ||
    die "cannot list the nodes of ${KUBECONFIG}"
  [[ -n "${notready}" ]] || die "the cluster has no nodes"
  if grep -qv ' True$' <<<"${notready}"; then
    "${k[@]}" get nodes -o jsonpath='{range .items[*]}{.metadata.name}{":\n"}{range .status.conditions[*]}{"  "}{.type}{"="}{.status}{" "}{.reason}{": "}{.message}{"\n"}{end}{end}' >&2
    die "nodes not Ready"
  fi
  log "images present; nodes Ready: $(awk '{ print $1 }' <<<"${notready}" | paste -sd ' ')"
}

# report <junit.xml>... prints "N passed, N failed, N skipped" for the runs of
# the reports and the failed specs. Filtered-out specs are in the report as "skipped" with no
# reason; a spec that skipped itself carries "skipped - <why>".
report() {
  local xml
  for xml; do
    [[ -f "${xml}" ]] || { echo "no report ${xml}"; return; }
  done
  awk '
    function unxml(s) {
      gsub(/&#34;|&quot;/, "\"", s); gsub(/&#39;|&apos;/, "'\''", s)
      gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&amp;/, "\\&", s)
      return s
    }
    /<testcase / {
      name = $0; sub(/.*<testcase name="/, "", name); sub(/".*/, "", name)
      status = $0; sub(/.*status="/, "", status); sub(/".*/, "", status)
      sig = "(no SIG)"
      if (match(name, /\[sig-[a-z0-9-]+\]/)) sig = substr(name, RSTART + 1, RLENGTH - 2)
      # Suite nodes ([SynchronizedBeforeSuite], [ReportAfterSuite], ...)
      # count only when they fail.
      if (status == "passed") { if (name ~ /^\[It\]/) { passed++; sigs[sig]; sp[sig]++ } }
      else if (status == "skipped") pending = 1
      else if (status != "pending") { failed++; names[failed] = unxml(name); sigs[sig]; sf[sig]++; failing = 1 }
      next
    }
    # Why a spec failed: its failure message, lines joined by " | ".
    failing && /<failure message="/ {
      why = $0; sub(/.*<failure message="/, "", why); sub(/".*/, "", why)
      gsub(/&#xA;|&#10;/, " | ", why); gsub(/&#x9;|&#9;/, " ", why)
      why = unxml(why)
      if (length(why) > 400) why = substr(why, 1, 400) "..."
      whys[failed] = why; failing = 0
    }
    pending && /<skipped message="skipped - / { skipped++; sigs[sig]; ss[sig]++ }
    /<\/testcase>/ { pending = 0; failing = 0 }
    END {
      printf "%d passed, %d failed, %d skipped\n", passed, failed, skipped
      cmd = "sort"
      for (g in sigs) printf "  %-22s %4d passed, %3d failed, %3d skipped\n", g ":", sp[g], sf[g], ss[g] | cmd
      close(cmd)
      for (i = 1; i <= failed; i++) {
        print "  FAIL: " names[i]
        if (whys[i] != "") print "    WHY: " whys[i]
      }
    }' "$@"
}

# list_focus <file> prints a focus regexp matching exactly the spec names the
# file lists, one per line; a listed name no spec has stops the run, so a
# renamed spec does not silently leave the list.
list_focus() {
  local names
  names="$(grep -v -e '^#' -e '^[[:space:]]*$' "$1")" || die "no spec names in $1"
  local known missing
  known="$("${OUT}/e2e.test" --list-conformance-tests | awk '
    /^  codename: / { sub(/^  codename: '"'"'/, ""); name = $0; open = 1; next }
    open && /^  [a-z]+:/ { sub(/'"'"'$/, "", name); gsub(/'"''"'/, "'"'"'", name); print name; open = 0; next }
    open { sub(/^ +/, ""); name = name " " $0 }')"
  missing="$(grep -v -x -F -f <(echo "${known}") <<<"${names}" || true)"
  [[ -z "${missing}" ]] || die "$1 names specs e2e.test does not have:"$'\n'"${missing}"
  # The names are literal: every regexp metacharacter escaped; each ends the
  # spec's text (which ginkgo prefixes with more than the listed name).
  sed -e 's/[][\\.*^$()+?{}|]/\\&/g' -e 's/$/$/' <<<"${names}" | paste -sd '|'
}

conformance::run() {
  [[ -x "${OUT}/e2e.test" && -x "${OUT}/ginkgo" ]] || die "e2e.test or ginkgo missing: hack/conformance.sh build"
  local focus="${CONFORMANCE_FOCUS:-\[Conformance\]}" skip='\[Disruptive\]'
  if [[ -n "${CONFORMANCE_LIST:-}" ]]; then
    focus="$(list_focus "${CONFORMANCE_LIST}")" || exit 1
  fi
  [[ -n "${CONFORMANCE_SKIP:-}" ]] && skip+="|${CONFORMANCE_SKIP}"
  local procs="${CONFORMANCE_PROCS:-4}" timeout="${CONFORMANCE_TIMEOUT:-4h}"
  rm -rf "${RESULTS}"
  mkdir -p "${RESULTS}"
  # kubectl specs run the kubectl of --kubectl-path; the suite's own.
  local e2e_flags=(
    --kubeconfig="${KUBECONFIG}"
    --provider=skeleton
    --kubectl-path="${OUT}/kubectl"
    --report-dir="${RESULTS}"
  )
  local start rc=0 status=0
  mirror_start
  start="$(date +%s)"
  log "non-[Serial] specs, ${procs} in parallel: ${CONFORMANCE_LIST:+the specs of ${CONFORMANCE_LIST}, }focus ${focus:0:200}"
  "${OUT}/ginkgo" --procs="${procs}" --focus="${focus}" --skip="${skip}|\[Serial\]" \
    --timeout="${timeout}" --no-color --silence-skips \
    "${OUT}/e2e.test" -- "${e2e_flags[@]}" --report-prefix=parallel_ >"${RESULTS}/parallel.log" 2>&1 || rc=$?
  tail -n 40 "${RESULTS}/parallel.log"
  ((rc == 0)) || status=1
  log "[Serial] specs, one at a time"
  rc=0
  "${OUT}/ginkgo" --focus="${focus}" --skip="${skip}" --label-filter='Serial' \
    --timeout="${timeout}" --no-color --silence-skips \
    "${OUT}/e2e.test" -- "${e2e_flags[@]}" --report-prefix=serial_ >"${RESULTS}/serial.log" 2>&1 || rc=$?
  tail -n 40 "${RESULTS}/serial.log"
  ((rc == 0)) || status=1
  echo
  echo "non-[Serial]: $(report "${RESULTS}/junit_parallel_01.xml")"
  echo "[Serial]: $(report "${RESULTS}/junit_serial_01.xml")"
  echo "overall: $(report "${RESULTS}/junit_parallel_01.xml" "${RESULTS}/junit_serial_01.xml")"
  echo "wall time $(($(date +%s) - start))s; reports and logs in ${RESULTS}"
  return "${status}"
}

trireme::suite_steps conformance "$@"
