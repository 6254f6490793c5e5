package eviction

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
	cri "k8s.io/cri-api/pkg/apis"

	"trireme.dev/kubelet/internal/containerstats"
)

// HostObserver measures the signals on this machine: memory from
// /proc/meminfo, nodefs from the kubelet's root directory, imagefs from
// the runtime's image file system (CRI ImageFsInfo; nodefs when the
// runtime does not say), PIDs from pid_max and the threads running.
type HostObserver struct {
	RootDir string
	Images  cri.ImageManagerService
	// Proc is /proc (tests point it elsewhere).
	Proc string
}

// Observe returns every signal it can measure.
func (h HostObserver) Observe(ctx context.Context) (map[Signal]Observation, error) {
	proc := h.Proc
	if proc == "" {
		proc = "/proc"
	}
	out := map[Signal]Observation{}
	mem, err := MemInfo(proc + "/meminfo")
	if err != nil {
		return nil, err
	}
	out[MemoryAvailable] = mem
	avail, inodes, err := fsObservations(h.RootDir)
	if err != nil {
		return nil, err
	}
	out[NodeFsAvailable], out[NodeFsInodesFree] = avail, inodes
	out[ImageFsAvailable], out[ImageFsInodesFree] = avail, inodes
	if h.Images != nil {
		if fs, err := h.Images.ImageFsInfo(ctx); err == nil && len(fs.GetImageFilesystems()) > 0 {
			if mp := fs.ImageFilesystems[0].GetFsId().GetMountpoint(); mp != "" {
				if a, i, err := fsObservations(mp); err == nil {
					out[ImageFsAvailable], out[ImageFsInodesFree] = a, i
				}
			}
		}
	}
	if pids, err := PIDs(proc); err == nil {
		out[PIDAvailable] = pids
	}
	return out, nil
}

// MemInfo reads MemAvailable out of MemTotal.
func MemInfo(path string) (Observation, error) {
	f, err := os.Open(path)
	if err != nil {
		return Observation{}, err
	}
	defer f.Close()
	var o Observation
	var haveTotal, haveAvail bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 2 && fields[2] == "kB" {
			v *= 1024
		}
		switch fields[0] {
		case "MemTotal:":
			o.Capacity, haveTotal = v, true
		case "MemAvailable:":
			o.Available, haveAvail = v, true
		}
	}
	if !haveTotal || !haveAvail {
		return Observation{}, fmt.Errorf("%s lacks MemTotal or MemAvailable", path)
	}
	return o, nil
}

func fsObservations(path string) (Observation, Observation, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return Observation{}, Observation{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bs := int64(st.Bsize)
	return Observation{Available: int64(st.Bavail) * bs, Capacity: int64(st.Blocks) * bs},
		Observation{Available: int64(st.Ffree), Capacity: int64(st.Files)}, nil
}

// PIDs is pid_max less the threads the kernel runs (/proc/loadavg's
// "running/total").
func PIDs(proc string) (Observation, error) {
	b, err := os.ReadFile(proc + "/sys/kernel/pid_max")
	if err != nil {
		return Observation{}, err
	}
	max, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return Observation{}, err
	}
	la, err := os.ReadFile(proc + "/loadavg")
	if err != nil {
		return Observation{}, err
	}
	fields := strings.Fields(string(la))
	if len(fields) < 4 {
		return Observation{}, fmt.Errorf("loadavg %q", la)
	}
	_, total, ok := strings.Cut(fields[3], "/")
	n, err := strconv.ParseInt(total, 10, 64)
	if !ok || err != nil {
		return Observation{}, fmt.Errorf("loadavg %q", la)
	}
	return Observation{Available: max - n, Capacity: max}, nil
}

// CRIUsage sums each pod's containers' working set and writable layer
// from CRI ListContainerStats.
func CRIUsage(rs cri.RuntimeService) func(ctx context.Context) (map[types.UID]PodUsage, error) {
	return func(ctx context.Context) (map[types.UID]PodUsage, error) {
		stats, err := containerstats.List(ctx, rs)
		if err != nil {
			return nil, err
		}
		out := map[types.UID]PodUsage{}
		for _, s := range stats {
			uid := types.UID(s.GetAttributes().GetLabels()["io.kubernetes.pod.uid"])
			u := out[uid]
			u.Memory += int64(s.GetMemory().GetWorkingSetBytes().GetValue())
			u.Disk += int64(s.GetWritableLayer().GetUsedBytes().GetValue())
			out[uid] = u
		}
		return out, nil
	}
}
