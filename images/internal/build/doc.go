// Package build assembles Trireme's container images without Docker or a registry: one
// deterministic filesystem layer on an empty base, an image config, and a docker-archive
// tarball that `ctr -n k8s.io images import` accepts.
package build
