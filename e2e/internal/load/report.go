package load

import (
	"fmt"
	"strings"
	"time"
)

func (r *runner) printMemory(when string) {
	if r.cfg.ServerPID == 0 {
		return
	}
	m, err := ReadMemory(r.cfg.ServerPID)
	if err != nil {
		fmt.Fprintf(r.out, "server memory %s: %v\n", when, err)
		return
	}
	fmt.Fprintf(r.out, "server memory %s: %s\n", when, m)
}

const verbRow = "%-19s %-7s %9s %7s %10s %10s %10s %10s %12s\n"

func (r *runner) printVerbHeader() {
	budget := fmt.Sprintf("%s per verb", r.cfg.Duration)
	if r.cfg.Count > 0 {
		budget = fmt.Sprintf("%d operations per verb", r.cfg.Count)
	}
	fmt.Fprintf(r.out, "\nverbs (%s; list pages of %d; watch = patch start to event; SRV-CPU/OP = server CPU time over the phase / OPS):\n", budget, r.cfg.ListLimit)
	labels := map[string]string{runLabel: r.run, clientLabel: "0"}
	for _, k := range r.cfg.Kinds {
		fmt.Fprintf(r.out, "  one %s object: %s\n", k, encodedSize(k, labels))
	}
	fmt.Fprintf(r.out, verbRow, "KIND", "VERB", "OPS", "ERRORS", "OPS/S", "P50", "P99", "MAX", "SRV-CPU/OP")
}

func (r *runner) printVerb(kind, verb string, s Summary) {
	fmt.Fprintf(r.out, verbRow, kind, verb, fmt.Sprint(s.Ops), fmt.Sprint(s.Errors),
		fmt.Sprintf("%.1f", s.Throughput), dur(s.P50), dur(s.P99), dur(s.Max), cpuPerOp(s))
	for _, e := range s.ErrorTexts {
		fmt.Fprintf(r.out, "    error: %s\n", e)
	}
}

func (r *runner) printList(res ListResult) {
	c := res.Created
	fmt.Fprintf(r.out, "\nlist of %d pods: created %d in %s (%.1f/s, p50 %s, p99 %s, %d errors)\n",
		r.cfg.ListSize, c.Ops, dur(c.Elapsed), c.Throughput, dur(c.P50), dur(c.P99), c.Errors)
	for _, e := range c.ErrorTexts {
		fmt.Fprintf(r.out, "    error: %s\n", e)
	}
	for _, m := range res.Modes {
		runs := make([]string, len(m.Runs))
		for i, d := range m.Runs {
			runs[i] = dur(d)
		}
		fmt.Fprintf(r.out, "  %-36s %d items, %.1f MiB, took %s\n", m.Mode.Name+":", m.Items, float64(m.Bytes)/(1<<20), strings.Join(runs, " "))
		if m.Err != nil {
			fmt.Fprintf(r.out, "    error: %v\n", m.Err)
		}
	}
}

func (r *runner) printFanout(res FanoutResult) {
	fmt.Fprintf(r.out, "\nwatchers: %d established in %s; %d events each\n", res.Watchers, dur(res.Established), res.Events)
	want := int64(res.Watchers) * int64(res.Events)
	fmt.Fprintf(r.out, "  complete %d/%d, delivered %d/%d, duplicates %d, closed early %d\n",
		res.Complete, res.Watchers, res.Delivered-res.Duplicates, want, res.Duplicates, res.Closed)
	l := res.Latency
	fmt.Fprintf(r.out, "  delivery latency (create start to receipt): p50 %s, p99 %s, max %s; %.0f events/s\n",
		dur(l.P50), dur(l.P99), dur(l.Max), l.Throughput)
	for _, e := range res.WatchErrors {
		fmt.Fprintf(r.out, "    error: %s\n", e)
	}
}

// dur rounds a duration to three significant figures or so for tables.
func dur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	default:
		return d.Round(10 * time.Microsecond).String()
	}
}

func (r *runner) printDiscovery(res DiscoveryResult) {
	fmt.Fprintf(r.out, "\ndiscovery with %d more CRDs (installed and discovered in %s; %d of them listed):\n", res.CRDs, dur(res.Setup), res.Resources)
	for _, m := range []struct {
		name string
		s    Summary
	}{{"aggregated (/api + /apis, 2 requests)", res.Aggregated}, {"legacy (every group version)", res.Legacy}} {
		fmt.Fprintf(r.out, "  %-40s runs %d, errors %d, p50 %s, p99 %s, max %s\n", m.name, m.s.Ops, m.s.Errors, dur(m.s.P50), dur(m.s.P99), dur(m.s.Max))
		for _, e := range m.s.ErrorTexts {
			fmt.Fprintf(r.out, "    error: %s\n", e)
		}
	}
}

// cpuPerOp is the server's CPU time per successful operation: unlike
// throughput, it does not depend on what else the machine runs, so kinds
// can be compared on a shared machine.
func cpuPerOp(s Summary) string {
	if s.ServerCPU <= 0 || s.Ops == 0 {
		return "-"
	}
	return dur(s.ServerCPU / time.Duration(s.Ops))
}
