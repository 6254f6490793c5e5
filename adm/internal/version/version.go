// Package version holds triremeadm's own version, stamped at build time; it is the
// default Kubernetes version, so the images it installs are those built with it.
package version

// Version is set with -ldflags "-X trireme.dev/adm/internal/version.Version=...".
var Version = "v1.37.0-trireme.dev"
