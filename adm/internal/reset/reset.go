// Package reset undoes what triremeadm init made on this machine: it stops the
// processes triremeadm supervises, by the PIDs it recorded, and removes the files and
// directories it wrote. Images imported into containerd and the logs under
// /var/log/trireme are kept, as kubeadm keeps them.
package reset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"trireme.dev/adm/internal/containerd"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/supervisor"
	"trireme.dev/adm/internal/tcprto"
	"trireme.dev/adm/internal/vip"
)

// Supervised are the processes triremeadm starts, stopped in this order.
var Supervised = []string{"kubelet", "containerd"}

// Kubeconfigs are the kubeconfig files init writes.
var Kubeconfigs = []string{"admin.conf", "super-admin.conf", "controller-manager.conf", "scheduler.conf", "kubelet.conf", "bootstrap-kubelet.conf", "vip-manager.conf", "cloud-controller-manager.conf"}

// Inputs names what to remove.
type Inputs struct {
	Paths paths.Paths
	// PKIDir and EtcdDataDir are below the root already.
	PKIDir, EtcdDataDir string
	// Network cleans the node's networking in this network namespace too:
	// the control plane's virtual IP, the proxy's, flannel's,
	// trireme-netpol's and the CNI plugins' rules and the CNI bridge. triremeadm reset sets it;
	// a reset of files below a test root leaves the machine's network alone,
	// where another cluster's pods may depend on that bridge and those rules.
	Network bool
}

// Targets lists every file and directory reset removes.
func Targets(in Inputs) []string {
	p := in.Paths
	out := []string{p.ManifestsDir(), in.PKIDir, in.EtcdDataDir, p.KubeletDir(), p.ContainerdDir(),
		filepath.Dir(p.CNITemplate()), filepath.Join(p.CNIConfDir(), containerd.GeneratedCNIConfig),
		p.PodNetworkDataDir(),
		filepath.Join(p.CNIConfDir(), FlannelConflist), p.FlannelRunDir(),
		// containerd leaves its sockets behind when it stops.
		p.ContainerdSocket(), p.ContainerdSocket() + ".ttrpc",
		// The containers' logs, as the kubelet-start phase configures them (the
		// kubelet keeps those of deleted pods until its garbage collection).
		p.In("/var/log/pods"),
		// The local-path addon's volumes on this node: the data of every
		// PersistentVolume it provisioned here, as the node is leaving.
		p.LocalPathDir(),
		// Upgrade's backups, as kubeadm reset removes its tmp directory.
		p.TmpDir()}
	for _, k := range Kubeconfigs {
		out = append(out, p.Kubeconfig(k))
	}
	return out
}

// Run stops the supervised processes and removes the targets, reporting each action
// through report. It carries on past failures and returns them all.
func Run(in Inputs, report func(format string, args ...any)) error {
	var errs []error
	ctx := context.Background()
	kc, kubeletConfigured, err := readKubeletConfig(in.Paths.KubeletConfig())
	if err != nil {
		errs = append(errs, err)
		kc = &kubeletv1beta1.KubeletConfiguration{}
	}
	// Before the kubelet and so etcd stop: a member that leaves without saying
	// so counts against the others' quorum for good.
	if removed, err := RemoveEtcdMember(in); err != nil {
		report("warning: could not remove this node's etcd member (remove it with etcdctl member remove): %v", err)
	} else if removed {
		report("removed this node's etcd member from the cluster")
	}
	for _, name := range Supervised {
		if name == "containerd" {
			// The kubelet is stopped, so nothing recreates the pods now.
			n, err := RemovePods(ctx, in.Paths.ContainerdSocket(), in.Paths.In("/var/log/pods"))
			if err != nil {
				// A pod whose namespace `ip netns add` shadowed (a cluster an
				// earlier triremeadm installed keeps them in /run/netns) cannot
				// be removed by containerd: release those and try once more.
				released, rerr := ReleaseNetNS(ctx, containerd.LegacyNetNSDir, "cni-")
				for _, p := range released {
					report("removed the network namespace %s", p)
				}
				if rerr != nil {
					errs = append(errs, rerr)
				}
				if len(released) > 0 {
					var m int
					m, err = RemovePods(ctx, in.Paths.ContainerdSocket(), in.Paths.In("/var/log/pods"))
					n += m
				}
			}
			if err != nil {
				errs = append(errs, err)
			}
			if n > 0 {
				report("removed %d pod(s) and their containers", n)
			}
			// The kubelet's image volume mounts must go first: a view in
			// use cannot be removed.
			unmounted, err := UnmountBelow(in.Paths.KubeletDir())
			if err != nil {
				errs = append(errs, err)
			}
			for _, m := range unmounted {
				report("unmounted %s", m)
			}
			if n, err := RemoveImageViews(ctx, in.Paths.ContainerdSocket()); err != nil {
				errs = append(errs, err)
			} else if n > 0 {
				report("removed %d image volume snapshot(s)", n)
			}
		}
		pidFile := in.Paths.PIDFile(name)
		pid, _ := supervisor.ReadPID(pidFile)
		stopped, err := supervisor.Stop(pidFile, 20*time.Second)
		if err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", name, err))
			continue
		}
		if stopped {
			report("stopped %s (PID %d)", name, pid)
		}
		if name == "containerd" {
			pids, err := StopShims(in.Paths.ContainerdSocket(), 5*time.Second)
			if err != nil {
				errs = append(errs, err)
			}
			if len(pids) > 0 {
				report("stopped %d containerd shim(s) left after containerd (PIDs %v)", len(pids), pids)
			}
		}
	}
	// Without a kubelet configuration no kubelet ran from this root, and
	// the default cgroup root's kubepods may belong to another kubelet.
	if kubeletConfigured {
		if ok, err := RemovePodCgroups(kc.CgroupRoot); err != nil {
			errs = append(errs, err)
		} else if ok {
			report("removed the pods' cgroups below %s", path.Join("/", kc.CgroupRoot, "kubepods"))
		}
	}
	if _, err := os.Lstat(kc.PodLogsDir); err == nil && kc.PodLogsDir != in.Paths.In("/var/log/pods") {
		// A logs directory the user chose; the default one is a target below.
		if err := os.RemoveAll(kc.PodLogsDir); err != nil {
			errs = append(errs, err)
		} else {
			report("removed %s", kc.PodLogsDir)
		}
	}
	if in.Network {
		errs = append(errs, cleanNetwork(ctx, in, report)...)
	}
	// Namespaces of pods containerd could not remove stay mounted below its
	// state directory once it has stopped.
	for _, dir := range []string{in.Paths.KubeletDir(), containerd.NetNSDir(in.Paths.ContainerdState())} {
		unmounted, err := UnmountBelow(dir)
		if err != nil {
			errs = append(errs, err)
		}
		for _, m := range unmounted {
			report("unmounted %s", m)
		}
	}
	for _, t := range Targets(in) {
		if _, err := os.Lstat(t); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := os.RemoveAll(t); err != nil {
			errs = append(errs, err)
			continue
		}
		report("removed %s", t)
	}
	return errors.Join(errs...)
}

// cleanNetwork removes what the node added to this network namespace: the
// virtual IP, the proxy's, flannel's, trireme-netpol's and the CNI plugins'
// rules, and the CNI bridge.
func cleanNetwork(ctx context.Context, in Inputs, report func(format string, args ...any)) []error {
	var errs []error
	if ok, err := RemoveVIP(in, vip.Linux{}); err != nil {
		errs = append(errs, fmt.Errorf("remove the virtual IP: %w", err))
	} else if ok {
		report("removed the control plane's virtual IP from this node")
	}
	if ok, err := CleanupProxyRules(ctx); err != nil {
		errs = append(errs, err)
	} else if ok {
		report("removed the proxy's nftables table and iptables chains")
	}
	if err := CleanupFlannel(ctx, filepath.Join(in.Paths.FlannelRunDir(), "subnet.env"), report); err != nil {
		errs = append(errs, fmt.Errorf("clean up flannel: %w", err))
	}
	if err := CleanupNetworkPolicy(ctx, report); err != nil {
		errs = append(errs, fmt.Errorf("clean up trireme-netpol: %w", err))
	}
	if err := CleanupCNIChains(ctx, report); err != nil {
		errs = append(errs, fmt.Errorf("clean up the CNI plugins' chains: %w", err))
	}
	if h, ok := tcprto.ForRoot(in.Paths.Root); ok {
		if undone, err := h.Restore(); err != nil {
			errs = append(errs, err)
		} else if undone {
			report("set %s back to the kernel's %d and removed %s", tcprto.Name, tcprto.KernelDefault, h.ConfFile)
		}
	}
	if ok, err := DeleteLink(containerd.BridgeName); err != nil {
		errs = append(errs, err)
	} else if ok {
		report("deleted the CNI bridge %s", containerd.BridgeName)
	}
	return errs
}
