package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"trireme.dev/kubelet/internal/containerstats"
)

// processStart approximates the node's stats collection start.
var processStart = metav1.Now()

// statsSummary serves /stats/summary from the runtime's container and
// sandbox stats (CRI ListContainerStats, ListPodSandboxStats); runtimes
// without pod sandbox stats (containerd 1.6 answers Unimplemented) give
// pods without network figures, as upstream's CRI stats provider does.
func (s *server) statsSummary(w http.ResponseWriter, r *http.Request) {
	sum, err := s.summary(r.Context())
	if err != nil {
		s.cfg.Log.Error(err, "Stats summary failed")
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(sum)
}

func (s *server) summary(ctx context.Context) (*statsv1alpha1.Summary, error) {
	now := metav1.Now()
	sum := &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: s.cfg.NodeName, StartTime: processStart}}
	sum.Node.CPU = nodeCPU(now)
	if mem := nodeMemory(now); mem != nil {
		sum.Node.Memory = mem
	}
	if s.cfg.RootDir != "" {
		sum.Node.Fs = fsStats(s.cfg.RootDir, now)
	}
	containers, err := containerstats.List(ctx, s.cfg.Runtime)
	if err != nil {
		return nil, fmt.Errorf("container stats: %w", err)
	}
	list, err := s.cfg.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	byPod := currentContainers(containers, list)
	network := map[string]*statsv1alpha1.NetworkStats{}
	if sandboxes, err := s.cfg.Runtime.ListPodSandboxStats(ctx, &runtimeapi.PodSandboxStatsFilter{}); err == nil {
		for _, sb := range sandboxes {
			uid := sb.GetAttributes().GetMetadata().GetUid()
			if n := sb.GetLinux().GetNetwork(); n != nil && n.DefaultInterface != nil {
				network[uid] = &statsv1alpha1.NetworkStats{Time: metav1.NewTime(time.Unix(0, n.Timestamp)), InterfaceStats: statsv1alpha1.InterfaceStats{
					Name: n.DefaultInterface.Name, RxBytes: u64(n.DefaultInterface.RxBytes), TxBytes: u64(n.DefaultInterface.TxBytes),
					RxErrors: u64(n.DefaultInterface.RxErrors), TxErrors: u64(n.DefaultInterface.TxErrors),
				}}
			}
		}
	} else if status.Code(err) != codes.Unimplemented {
		return nil, fmt.Errorf("pod sandbox stats: %w", err)
	}
	for _, pod := range s.cfg.Pods.Pods() {
		ps := statsv1alpha1.PodStats{
			PodRef:  statsv1alpha1.PodReference{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID)},
			Network: network[string(pod.UID)],
		}
		if pod.Status.StartTime != nil {
			ps.StartTime = *pod.Status.StartTime
		}
		var cpu, mem uint64
		for _, cc := range byPod[string(pod.UID)] {
			c := cc.stats
			cs := statsv1alpha1.ContainerStats{Name: c.GetAttributes().GetMetadata().GetName()}
			if cc.createdAt != 0 {
				cs.StartTime = metav1.NewTime(time.Unix(0, cc.createdAt))
			}
			if v := c.GetCpu(); v != nil {
				cs.CPU = &statsv1alpha1.CPUStats{Time: metav1.NewTime(time.Unix(0, v.Timestamp)), UsageCoreNanoSeconds: u64(v.UsageCoreNanoSeconds), UsageNanoCores: u64(v.UsageNanoCores)}
				cpu += v.GetUsageCoreNanoSeconds().GetValue()
			}
			if v := c.GetMemory(); v != nil {
				cs.Memory = &statsv1alpha1.MemoryStats{Time: metav1.NewTime(time.Unix(0, v.Timestamp)), WorkingSetBytes: u64(v.WorkingSetBytes), UsageBytes: u64(v.UsageBytes), RSSBytes: u64(v.RssBytes)}
				mem += v.GetWorkingSetBytes().GetValue()
			}
			if v := c.GetWritableLayer(); v != nil {
				cs.Rootfs = &statsv1alpha1.FsStats{Time: metav1.NewTime(time.Unix(0, v.Timestamp)), UsedBytes: u64(v.UsedBytes), InodesUsed: u64(v.InodesUsed)}
			}
			ps.Containers = append(ps.Containers, cs)
		}
		ps.CPU = &statsv1alpha1.CPUStats{Time: now, UsageCoreNanoSeconds: &cpu}
		ps.Memory = &statsv1alpha1.MemoryStats{Time: now, WorkingSetBytes: &mem}
		sum.Pods = append(sum.Pods, ps)
	}
	return sum, nil
}

// containerStats is one container's stats with the time the runtime
// created it, its start time as upstream's CRI stats provider reports it.
type containerStats struct {
	stats     *runtimeapi.ContainerStats
	createdAt int64
}

// currentContainers groups the containers' stats by pod UID, keeping per
// pod and container name only the newest instance that has not exited, as
// upstream's kubelet does: a restarted container's old instance would
// otherwise report a second, stale series under the same name.
func currentContainers(stats []*runtimeapi.ContainerStats, list []*runtimeapi.Container) map[string][]containerStats {
	byID := make(map[string]*runtimeapi.Container, len(list))
	for _, c := range list {
		byID[c.GetId()] = c
	}
	type key struct{ uid, name string }
	newest := map[key]containerStats{}
	var order []key
	for _, st := range stats {
		c, ok := byID[st.GetAttributes().GetId()]
		if !ok || c.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
			continue
		}
		k := key{st.GetAttributes().GetLabels()["io.kubernetes.pod.uid"], st.GetAttributes().GetMetadata().GetName()}
		prev, seen := newest[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || c.GetCreatedAt() > prev.createdAt {
			newest[k] = containerStats{stats: st, createdAt: c.GetCreatedAt()}
		}
	}
	byPod := map[string][]containerStats{}
	for _, k := range order {
		byPod[k.uid] = append(byPod[k.uid], newest[k])
	}
	return byPod
}

// u64 unwraps a CRI UInt64Value; nil stays nil.
func u64(v interface{ GetValue() uint64 }) *uint64 {
	if v == nil {
		return nil
	}
	x := v.GetValue()
	return &x
}

// nodeMemory reads the node's memory from /proc/meminfo, with the working
// set as cadvisor computes it for the root cgroup: usage (MemTotal -
// MemFree) less the inactive page cache, which the kernel reclaims first.
func nodeMemory(now metav1.Time) *statsv1alpha1.MemoryStats {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return nil
	}
	return parseMeminfo(string(data), now)
}

// parseMeminfo turns /proc/meminfo's text into the node's memory stats; nil
// if a field it needs is missing.
func parseMeminfo(text string, now metav1.Time) *statsv1alpha1.MemoryStats {
	kb := map[string]uint64{}
	for _, line := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		kb[name] = v * 1024
	}
	total, okTotal := kb["MemTotal"]
	free, okFree := kb["MemFree"]
	inactiveFile := kb["Inactive(file)"]
	if !okTotal || !okFree {
		return nil
	}
	usage := total - free
	ws := usage
	if inactiveFile < ws {
		ws -= inactiveFile
	}
	// Available as upstream's kubelet reports it to eviction: what the
	// working set leaves of the capacity.
	avail := total - ws
	return &statsv1alpha1.MemoryStats{Time: now, AvailableBytes: &avail, UsageBytes: &usage, WorkingSetBytes: &ws}
}

func fsStats(path string, now metav1.Time) *statsv1alpha1.FsStats {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return nil
	}
	bs := uint64(st.Bsize)
	capacity, avail := st.Blocks*bs, st.Bavail*bs
	used := capacity - st.Bfree*bs
	inodes, free := st.Files, st.Ffree
	inodesUsed := inodes - free
	return &statsv1alpha1.FsStats{Time: now, CapacityBytes: &capacity, AvailableBytes: &avail, UsedBytes: &used, Inodes: &inodes, InodesFree: &free, InodesUsed: &inodesUsed}
}
