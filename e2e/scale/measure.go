package scale

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// restClient is an unversioned client for raw paths (/metrics, /readyz).
func restClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = nil
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("make REST client: %w", err)
	}
	return rc, nil
}

// ProcStat is one process's resident memory and CPU time, read from /proc.
type ProcStat struct {
	RSS, PeakRSS int64 // bytes: VmRSS and VmHWM
	CPU          time.Duration
}

// ReadProcStat reads pid's figures.
func ReadProcStat(pid int) (ProcStat, error) {
	var ps ProcStat
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ps, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			ps.RSS = kb << 10
		case "VmHWM:":
			ps.PeakRSS = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ps, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: utime and stime are the 12th and 13th.
	rest := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(rest) < 13 {
		return ps, fmt.Errorf("short stat of pid %d", pid)
	}
	ut, _ := strconv.ParseInt(rest[11], 10, 64)
	st, _ := strconv.ParseInt(rest[12], 10, 64)
	// USER_HZ is 100 on every Linux this runs on.
	ps.CPU = time.Duration(ut+st) * 10 * time.Millisecond
	return ps, nil
}

// SLO is an upstream scalability objective for API call latency.
type SLO struct {
	Name string
	P99  time.Duration
}

// sloFor classifies a call as upstream's API call latency SLOs do: mutating
// calls and single-object reads within 1 s, namespace lists within 5 s,
// cluster lists within 30 s. Watches and others have none.
func sloFor(verb, scope string) (SLO, bool) {
	switch verb {
	case "POST", "APPLY":
		return SLO{"mutating ≤1s", time.Second}, true
	case "PUT", "PATCH", "DELETE":
		// A DELETE of a collection (the namespace controller's) is not a
		// single-object call, and upstream's SLO leaves it out.
		if scope != "resource" {
			return SLO{}, false
		}
		return SLO{"mutating ≤1s", time.Second}, true
	case "GET":
		if scope != "resource" { // /api, /openapi/v3: not resources
			return SLO{}, false
		}
		return SLO{"read object ≤1s", time.Second}, true
	case "LIST":
		if scope == "cluster" {
			return SLO{"cluster list ≤30s", 30 * time.Second}, true
		}
		return SLO{"namespace list ≤5s", 5 * time.Second}, true
	}
	return SLO{}, false
}

// Latency is one verb/resource/scope's p50 and p99.
type Latency struct {
	Verb, Resource, Scope string
	Count                 uint64
	P50, P99              time.Duration
}

// Met reports the SLO verdict: "ok", "MISSED" or "" without an SLO.
func (l Latency) Met() string {
	slo, ok := sloFor(l.Verb, l.Scope)
	switch {
	case !ok:
		return ""
	case l.P99 <= slo.P99:
		return "ok (" + slo.Name + ")"
	default:
		return "MISSED (" + slo.Name + ")"
	}
}

// ServerLatencies reads apiserver_request_duration_seconds from the
// apiserver's /metrics and returns the quantiles of every verb, resource
// and scope with at least minCount requests.
func ServerLatencies(ctx context.Context, cfg *rest.Config, minCount uint64) ([]Latency, error) {
	rc, err := restClient(cfg)
	if err != nil {
		return nil, err
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scrape apiserver metrics: %w", err)
	}
	families, err := parseMetrics(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	mf := families["apiserver_request_duration_seconds"]
	if mf == nil {
		return nil, fmt.Errorf("apiserver serves no apiserver_request_duration_seconds")
	}
	// Sum the series that differ in labels other than verb, resource and
	// scope (group, version, subresource, component, dry_run).
	type key struct{ verb, resource, scope string }
	type acc struct {
		count   uint64
		buckets map[float64]uint64
	}
	sums := map[key]*acc{}
	for _, m := range mf.GetMetric() {
		l := labels(m)
		if l["verb"] == "WATCH" || l["verb"] == "CONNECT" {
			continue
		}
		k := key{l["verb"], l["resource"], l["scope"]}
		if l["subresource"] != "" {
			k.resource += "/" + l["subresource"]
		}
		a := sums[k]
		if a == nil {
			a = &acc{buckets: map[float64]uint64{}}
			sums[k] = a
		}
		h := m.GetHistogram()
		a.count += h.GetSampleCount()
		for _, b := range h.GetBucket() {
			a.buckets[b.GetUpperBound()] += b.GetCumulativeCount()
		}
	}
	var out []Latency
	for k, a := range sums {
		if a.count < minCount {
			continue
		}
		out = append(out, Latency{Verb: k.verb, Resource: k.resource, Scope: k.scope, Count: a.count,
			P50: bucketQuantile(0.5, a.count, a.buckets), P99: bucketQuantile(0.99, a.count, a.buckets)})
	}
	sortLatencies(out)
	return out, nil
}

func sortLatencies(l []Latency) {
	sort.Slice(l, func(i, j int) bool {
		if l[i].Resource != l[j].Resource {
			return l[i].Resource < l[j].Resource
		}
		if l[i].Verb != l[j].Verb {
			return l[i].Verb < l[j].Verb
		}
		return l[i].Scope < l[j].Scope
	})
}

// bucketQuantile interpolates linearly inside the bucket holding quantile
// q, as Prometheus's histogram_quantile does.
func bucketQuantile(q float64, count uint64, cumulative map[float64]uint64) time.Duration {
	bounds := make([]float64, 0, len(cumulative))
	for b := range cumulative {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	rank := q * float64(count)
	lower, below := 0.0, uint64(0)
	for _, b := range bounds {
		c := cumulative[b]
		if float64(c) >= rank {
			if math.IsInf(b, 1) {
				return time.Duration(lower * float64(time.Second))
			}
			in := float64(c - below)
			frac := 1.0
			if in > 0 {
				frac = (rank - float64(below)) / in
			}
			return time.Duration((lower + (b-lower)*frac) * float64(time.Second))
		}
		lower, below = b, c
	}
	return time.Duration(lower * float64(time.Second))
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	return mf, nil
}

// EtcdDBSize reads etcd_mvcc_db_total_size_in_bytes from etcd's /metrics.
func EtcdDBSize(ctx context.Context, endpoint string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape etcd metrics: %w", err)
	}
	defer resp.Body.Close()
	families, err := parseMetrics(resp.Body)
	if err != nil {
		return 0, err
	}
	mf := families["etcd_mvcc_db_total_size_in_bytes"]
	if mf == nil || len(mf.GetMetric()) == 0 {
		return 0, fmt.Errorf("etcd serves no etcd_mvcc_db_total_size_in_bytes")
	}
	return int64(mf.GetMetric()[0].GetGauge().GetValue()), nil
}

// ClientLatencies records every request the harness's clients make, by
// verb, resource and scope, through a wrapped transport.
type ClientLatencies struct {
	mu  sync.Mutex
	obs map[[3]string][]time.Duration
}

// NewClientLatencies returns an empty recorder.
func NewClientLatencies() *ClientLatencies {
	return &ClientLatencies{obs: map[[3]string][]time.Duration{}}
}

// Wrap makes cfg's requests recorded.
func (c *ClientLatencies) Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			verb, resource, scope := classify(req)
			start := time.Now()
			resp, err := rt.RoundTrip(req)
			if verb != "" && verb != "WATCH" {
				c.mu.Lock()
				k := [3]string{verb, resource, scope}
				c.obs[k] = append(c.obs[k], time.Since(start))
				c.mu.Unlock()
			}
			return resp, err
		})
	})
	return cfg
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Latencies returns the quantiles recorded so far. A request's time is to
// its response headers: a list's body is read after.
func (c *ClientLatencies) Latencies() []Latency {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Latency
	for k, d := range c.obs {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		q := func(f float64) time.Duration { return s[int(math.Ceil(f*float64(len(s))))-1] }
		out = append(out, Latency{Verb: k[0], Resource: k[1], Scope: k[2], Count: uint64(len(s)), P50: q(0.5), P99: q(0.99)})
	}
	sortLatencies(out)
	return out
}

// classify names a request as the apiserver's metrics do: verb (upper
// case, LIST for a collection GET), resource[/subresource] and scope
// (resource, namespace or cluster).
func classify(req *http.Request) (verb, resource, scope string) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "", "", ""
	}
	ns := false
	if len(parts) >= 3 && parts[0] == "namespaces" {
		ns, parts = true, parts[2:]
	}
	if len(parts) == 0 {
		return "", "", ""
	}
	resource = parts[0]
	named := len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	verb = req.Method
	switch {
	case named:
		scope = "resource"
	case ns:
		scope = "namespace"
	default:
		scope = "cluster"
	}
	if req.Method == http.MethodGet && !named {
		verb = "LIST"
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			verb = "WATCH"
		}
	}
	return verb, resource, scope
}
