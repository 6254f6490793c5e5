package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
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
	containers, err := s.cfg.Runtime.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{})
	if err != nil {
		return nil, err
	}
	byPod := map[string][]*runtimeapi.ContainerStats{}
	for _, c := range containers {
		uid := c.GetAttributes().GetLabels()["io.kubernetes.pod.uid"]
		byPod[uid] = append(byPod[uid], c)
	}
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
		return nil, err
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
		for _, c := range byPod[string(pod.UID)] {
			cs := statsv1alpha1.ContainerStats{Name: c.GetAttributes().GetMetadata().GetName()}
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

// u64 unwraps a CRI UInt64Value; nil stays nil.
func u64(v interface{ GetValue() uint64 }) *uint64 {
	if v == nil {
		return nil
	}
	x := v.GetValue()
	return &x
}

func nodeMemory(now metav1.Time) *statsv1alpha1.MemoryStats {
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		return nil
	}
	unit := uint64(info.Unit)
	total := info.Totalram * unit
	avail := (info.Freeram + info.Bufferram) * unit
	used := total - avail
	return &statsv1alpha1.MemoryStats{Time: now, AvailableBytes: &avail, UsageBytes: &used, WorkingSetBytes: &used}
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
