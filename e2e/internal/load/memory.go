package load

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Memory is a process's resident set as the kernel reports it.
type Memory struct {
	RSS uint64 // VmRSS: resident now, in bytes
	HWM uint64 // VmHWM: peak resident so far, in bytes
	// Anon and File split RSS: the process's own memory, and pages of
	// mapped files (mostly the executable), which the kernel can drop.
	Anon, File uint64
}

// String formats the figures in MiB.
func (m Memory) String() string {
	return fmt.Sprintf("VmRSS %.1f MiB (anon %.1f, file %.1f), VmHWM %.1f MiB",
		float64(m.RSS)/(1<<20), float64(m.Anon)/(1<<20), float64(m.File)/(1<<20), float64(m.HWM)/(1<<20))
}

// ReadMemory reads VmRSS and VmHWM from /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	m, err := parseStatus(f)
	if err != nil {
		return Memory{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	return m, nil
}

// parseStatus extracts VmRSS and VmHWM, which the kernel prints in kB.
func parseStatus(r io.Reader) (Memory, error) {
	var m Memory
	var found int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch key {
		case "VmRSS":
			dst = &m.RSS
			found++
		case "VmHWM":
			dst = &m.HWM
			found++
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.File
		default:
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return Memory{}, fmt.Errorf("unexpected %s line %q", key, sc.Text())
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("parse %s: %w", key, err)
		}
		*dst = kb << 10
	}
	if err := sc.Err(); err != nil {
		return Memory{}, err
	}
	if found != 2 {
		return Memory{}, fmt.Errorf("VmRSS or VmHWM missing (a kernel thread or an exited process?)")
	}
	return m, nil
}

// clockTicks is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// ReadCPU returns the CPU time (user + system) process pid has used so far.
func ReadCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	return parseStat(string(b))
}

// parseStat extracts utime + stime, fields 14 and 15 of /proc/<pid>/stat,
// counted after the command name, which is in parentheses and may hold
// spaces.
func parseStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected stat %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state), so utime (14) is fields[11].
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected stat %q", stat)
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
