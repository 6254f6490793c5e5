// Package podcgroup sets the cpu and memory values of a pod's own cgroup,
// the parent of its containers', as upstream's kubelet does: cpu shares
// from the pod's requests, a cpu quota and a memory limit from its limits
// when every container declares them (always for Guaranteed pods), the
// minimum shares for BestEffort ones. The runtime creates the cgroup with
// the sandbox but sets nothing on it; the kubelet writes the values when
// the sandbox is made and again when the pod is resized in place.
package podcgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"trireme.dev/api/qos"
)

// Upstream's bounds: the fewest cpu shares, the quota period, the
// smallest quota.
const (
	minShares = 2
	maxShares = 262144
	period    = 100000
	minQuota  = 1000
)

// Values are a pod cgroup's settings; a zero CPUQuota or Memory is left
// unset (unlimited).
type Values struct {
	CPUShares int64
	CPUQuota  int64
	Memory    int64
}

// For returns the values of pod's cgroup, with the resources it is
// allocated, as upstream's ResourceConfigForPod computes them.
func For(pod *corev1.Pod) Values {
	class := pod.Status.QOSClass
	if class == "" {
		class = qos.PodQOSClass(pod)
	}
	if class == corev1.PodQOSBestEffort {
		return Values{CPUShares: minShares}
	}
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	cpuDeclared, memoryDeclared := true, true
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.Resources.Limits.Cpu().IsZero() {
				cpuDeclared = false
			}
			if c.Resources.Limits.Memory().IsZero() {
				memoryDeclared = false
			}
		}
	}
	v := Values{CPUShares: shares(requests.Cpu().MilliValue())}
	if class == corev1.PodQOSGuaranteed || cpuDeclared {
		v.CPUQuota = quota(limits.Cpu().MilliValue())
	}
	if class == corev1.PodQOSGuaranteed || memoryDeclared {
		v.Memory = limits.Memory().Value()
	}
	return v
}

func shares(milli int64) int64 {
	return min(max(milli*1024/1000, minShares), maxShares)
}

func quota(milli int64) int64 {
	if milli == 0 {
		return 0
	}
	return max(milli*period/1000, minQuota)
}

// Max holds the larger of each of a's and b's values (unset counting as
// unlimited): a pod resized in place holds both its old and its new
// containers' values while they are changed one by one, and a v1 cgroup
// refuses a child a quota above its parent's.
func Max(a, b Values) Values {
	larger := func(x, y int64) int64 {
		if x == 0 || y == 0 {
			return 0
		}
		return max(x, y)
	}
	return Values{CPUShares: max(a.CPUShares, b.CPUShares), CPUQuota: larger(a.CPUQuota, b.CPUQuota), Memory: larger(a.Memory, b.Memory)}
}

// Writer writes the values of pod cgroups (paths as
// "/kubepods/burstable/pod<uid>", the cgroupfs driver's) below Root, the
// hierarchies' mount point: its cpu and memory directories on cgroup v1,
// itself when Unified (v2).
type Writer struct {
	Root    string
	Unified bool
}

// Write sets path's values.
func (w Writer) Write(path string, v Values) error {
	var files [][2]string
	if w.Unified {
		dir := filepath.Join(w.Root, path)
		files = append(files, [2]string{filepath.Join(dir, "cpu.weight"), strconv.FormatInt(weight(v.CPUShares), 10)})
		max := "max"
		if v.CPUQuota > 0 {
			max = strconv.FormatInt(v.CPUQuota, 10)
		}
		files = append(files, [2]string{filepath.Join(dir, "cpu.max"), fmt.Sprintf("%s %d", max, period)})
		mem := "max"
		if v.Memory > 0 {
			mem = strconv.FormatInt(v.Memory, 10)
		}
		files = append(files, [2]string{filepath.Join(dir, "memory.max"), mem})
	} else {
		cpu, memory := filepath.Join(w.Root, "cpu", path), filepath.Join(w.Root, "memory", path)
		quota := int64(-1)
		if v.CPUQuota > 0 {
			quota = v.CPUQuota
		}
		files = append(files,
			[2]string{filepath.Join(cpu, "cpu.shares"), strconv.FormatInt(v.CPUShares, 10)},
			[2]string{filepath.Join(cpu, "cpu.cfs_period_us"), strconv.Itoa(period)},
			[2]string{filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10)})
		mem := int64(-1)
		if v.Memory > 0 {
			mem = v.Memory
		}
		files = append(files, [2]string{filepath.Join(memory, "memory.limit_in_bytes"), strconv.FormatInt(mem, 10)})
	}
	var errs []error
	for _, f := range files {
		if err := os.WriteFile(f[0], []byte(f[1]), 0); err != nil {
			errs = append(errs, fmt.Errorf("pod cgroup: %w", err))
		}
	}
	return errors.Join(errs...)
}

// weight is cgroup v2's cpu.weight for v1's shares, as runc converts it.
func weight(shares int64) int64 {
	return 1 + ((shares-2)*9999)/262142
}
