package reset

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RemovePods stops and removes every pod sandbox the container runtime at socket
// runs, through CRI, so that their containers end, their network namespaces and
// CNI allocations are released and their mounts go before containerd stops (a
// container outlives a stopped containerd under its shim). It returns how many it
// removed; a socket nobody serves is no error. The kubelet's log directory of each
// removed pod (podLogsDir/<namespace>_<name>_<uid>) goes too, when podLogsDir is set.
func RemovePods(ctx context.Context, socket, podLogsDir string) (int, error) {
	if c, err := net.DialTimeout("unix", socket, time.Second); err != nil {
		return 0, nil
	} else {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", socket, err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0, fmt.Errorf("list pod sandboxes: %w", err)
	}
	var errs []error
	n := 0
	for _, sb := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stop pod %s/%s: %w", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("remove pod %s/%s: %w", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
			continue
		}
		n++
		if md := sb.GetMetadata(); podLogsDir != "" && md != nil && md.Uid != "" {
			dir := filepath.Join(podLogsDir, md.Namespace+"_"+md.Name+"_"+md.Uid)
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return n, errors.Join(errs...)
}

// CleanupProxyRules runs `trireme-proxy --cleanup` (beside triremeadm, else from
// PATH), which removes the proxy's own nftables table and iptables chains only.
// Without the binary there is nothing of the proxy's to find either way.
func CleanupProxyRules(ctx context.Context) (bool, error) {
	bin := ""
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "trireme-proxy"); fileExists(p) {
			bin = p
		}
	}
	if bin == "" {
		p, err := exec.LookPath("trireme-proxy")
		if err != nil {
			return false, nil
		}
		bin = p
	}
	out, err := exec.CommandContext(ctx, bin, "--cleanup").CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("%s --cleanup: %w: %s", bin, err, strings.TrimSpace(string(out)))
	}
	return true, nil
}

// DeleteLink removes a network interface (the CNI bridge) if it exists.
func DeleteLink(name string) (bool, error) {
	if _, err := net.InterfaceByName(name); err != nil {
		return false, nil
	}
	if out, err := exec.Command("ip", "link", "delete", name).CombinedOutput(); err != nil {
		return false, fmt.Errorf("ip link delete %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return true, nil
}

// UnmountBelow unmounts every mount point below dir (deepest first), as the
// kubelet's volume mounts would otherwise keep files reset must remove.
func UnmountBelow(dir string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	prefix := filepath.Clean(dir) + "/"
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], prefix) {
			points = append(points, f[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	var errs []error
	var done []string
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			continue
		}
		done = append(done, p)
	}
	return done, errors.Join(errs...)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
