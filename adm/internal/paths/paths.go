// Package paths names every file and directory triremeadm writes, as kubeadm
// places them (DESIGN.md "Cluster files"), below an optional root directory that
// tests point at a temporary directory so that nothing touches /etc.
package paths

import (
	"path/filepath"
	"strings"
)

// Paths resolves triremeadm's well-known locations below Root ("" or "/" for the
// real machine).
type Paths struct {
	// Root prefixes every path; empty means "/".
	Root string
}

// In returns the absolute path p placed below the root.
func (p Paths) In(abs string) string {
	if p.Root == "" || p.Root == "/" {
		return abs
	}
	if strings.HasPrefix(abs, p.Root+"/") {
		return abs
	}
	return filepath.Join(p.Root, abs)
}

// ConfigDir is /etc/trireme: kubeconfigs live here.
func (p Paths) ConfigDir() string { return p.In("/etc/trireme") }

// TmpDir holds what triremeadm keeps for a while: upgrade's backups of the
// manifests and etcd (kubeadm's /etc/kubernetes/tmp). Reset removes it.
func (p Paths) TmpDir() string { return p.In("/etc/trireme/tmp") }

// ManifestsDir holds the static pod manifests.
func (p Paths) ManifestsDir() string { return p.In("/etc/trireme/manifests") }

// Kubeconfig returns the path of the kubeconfig named name (e.g. "admin.conf").
func (p Paths) Kubeconfig(name string) string { return filepath.Join(p.ConfigDir(), name) }

// KubeletDir is the kubelet's root directory.
func (p Paths) KubeletDir() string { return p.In("/var/lib/trireme/kubelet") }

// LocalPathDir is the node's directory of local-path volumes (the local-path
// addon's default nodePathMap entry), one subdirectory per volume.
func (p Paths) LocalPathDir() string { return p.In("/var/lib/trireme/local-path") }

// KubeletConfig is the node's KubeletConfiguration file.
func (p Paths) KubeletConfig() string { return filepath.Join(p.KubeletDir(), "config.yaml") }

// RunDir holds the PID files of the processes triremeadm supervises.
func (p Paths) RunDir() string { return p.In("/var/run/trireme") }

// LogDir holds the logs of the processes triremeadm supervises.
func (p Paths) LogDir() string { return p.In("/var/log/trireme") }

// PIDFile is the PID file of the supervised process name.
func (p Paths) PIDFile(name string) string { return filepath.Join(p.RunDir(), name+".pid") }

// LogFile is the log file of the supervised process name.
func (p Paths) LogFile(name string) string { return filepath.Join(p.LogDir(), name+".log") }

// ContainerdDir holds containerd's configuration written by triremeadm.
func (p Paths) ContainerdDir() string { return p.In("/etc/trireme/containerd") }

// RegistryHostsDir is containerd's registry configuration (config_path): a
// hosts.toml per registry in a directory of its name, as containerd documents
// it, for mirrors and registries' certificates. It is the user's, so reset
// leaves it.
func (p Paths) RegistryHostsDir() string { return p.In("/etc/containerd/certs.d") }

// ContainerdConfig is containerd's config.toml.
func (p Paths) ContainerdConfig() string { return filepath.Join(p.ContainerdDir(), "config.toml") }

// ContainerdRoot is containerd's persistent state. On the real machine it is
// containerd's usual /var/lib/containerd so that imported images are shared with
// `ctr`; below a test root it is private.
func (p Paths) ContainerdRoot() string { return p.In("/var/lib/containerd") }

// ContainerdState is containerd's runtime state.
func (p Paths) ContainerdState() string { return p.In("/run/containerd") }

// ContainerdSocket is containerd's gRPC socket.
func (p Paths) ContainerdSocket() string { return p.In("/run/containerd/containerd.sock") }

// CNIConfDir is where containerd looks for (and writes from the template) CNI
// network configurations.
func (p Paths) CNIConfDir() string { return p.In("/etc/cni/net.d") }

// CNITemplate is the CNI conf_template containerd fills with the node's pod CIDR.
func (p Paths) CNITemplate() string { return p.In("/etc/trireme/cni/10-trireme.conflist.template") }

// CNIDataDir is host-local IPAM's state.
func (p Paths) CNIDataDir() string { return p.In("/var/lib/cni/networks") }

// PodNetworkDataDir is host-local's dataDir for the node's pod network: the
// CNI template's, and the flannel addon's conflist's, so that both hand out
// addresses from one lease store.
func (p Paths) PodNetworkDataDir() string { return filepath.Join(p.CNIDataDir(), "trireme") }

// CNIBinDir holds the CNI plugin binaries (Debian's containernetworking-plugins); it
// is a system directory and never moved below the root.
const CNIBinDir = "/usr/lib/cni"

// FlannelRunDir holds flanneld's subnet file (subnet.env), which reset reads
// for the pod network whose routes it removes.
func (p Paths) FlannelRunDir() string { return p.In("/run/flannel") }
