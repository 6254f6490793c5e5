package benchmark

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/componentbase/nftbatch"
	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/iptables"
	"trireme.dev/proxy/internal/model"
	"trireme.dev/proxy/internal/nftables"

	"golang.org/x/sys/unix"
)

const (
	endpointsPerService = 10
	// nodes is the size of the cluster the endpoints are spread over, as
	// their slices say (the endpointslice controller names each pod's
	// node): one endpoint in nodes is on the proxy's own node.
	nodes = 100
)

// state makes n ClusterIP Services with 10 ready endpoints each.
func state(n int) model.State {
	s := model.State{}
	for i := range n {
		name := model.ServicePortName{NamespacedName: types.NamespacedName{Namespace: "bench", Name: fmt.Sprintf("svc-%d", i)}, Port: "http", Protocol: v1.ProtocolTCP}
		sp := &model.ServicePort{Name: name, ClusterIP: addr(10, 96, i), Port: 80, Protocol: v1.ProtocolTCP}
		for j := range endpointsPerService {
			k := i*endpointsPerService + j
			sp.Endpoints = append(sp.Endpoints, model.Endpoint{IP: addr(10, 128, k), Port: 8080, Ready: true, Serving: true,
				Local: k%nodes == 0, Remote: k%nodes != 0})
		}
		s[name] = sp
	}
	return s
}

func addr(a, b byte, i int) netip.Addr {
	return netip.AddrFrom4([4]byte{a, b + byte(i>>16), byte(i >> 8), byte(i)})
}

// netns runs jobs on one OS thread inside a fresh network namespace, so
// that the nft and iptables-restore processes the back ends start (forked
// from that thread) program the namespace and never the host.
type netns struct {
	name string
	jobs chan func()
}

func newNetns(b *testing.B) *netns {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Fatal("the sync benchmarks need root: they create a network namespace")
	}
	n := &netns{name: fmt.Sprintf("tpx-bench-%d", os.Getpid()), jobs: make(chan func())}
	if out, err := exec.Command("ip", "netns", "add", n.name).CombinedOutput(); err != nil {
		b.Fatalf("ip netns add: %v: %s", err, out)
	}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		f, err := os.Open("/var/run/netns/" + n.name)
		if err == nil {
			err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
			f.Close()
		}
		ready <- err
		if err != nil {
			return
		}
		for job := range n.jobs {
			job()
		}
	}()
	if err := <-ready; err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		close(n.jobs)
		_ = exec.Command("ip", "netns", "del", n.name).Run()
	})
	return n
}

func (n *netns) do(fn func()) {
	done := make(chan struct{})
	n.jobs <- func() { fn(); close(done) }
	<-done
}

// childCPU is the CPU time used by finished child processes (nft,
// iptables-restore): on a loaded machine it says more than wall time.
func childCPU() time.Duration { return rusage(unix.RUSAGE_CHILDREN) }

// selfCPU is this process's CPU time: the proxy's own share of a sync.
func selfCPU() time.Duration { return rusage(unix.RUSAGE_SELF) }

// selfSys is this process's system CPU time: with the netlink writer,
// mostly the kernel applying the batch.
func selfSys() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Stime.Nano())
}

func rusage(who int) time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rssMiB() float64 { return statusMiB("VmRSS:") }

// peakRSSMiB is the most RSS the process held since resetPeakRSS.
func peakRSSMiB() float64 { return statusMiB("VmHWM:") }

// resetPeakRSS sets the process's RSS high-water mark to its current RSS
// (proc(5), clear_refs), so that peakRSSMiB measures one sync.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func statusMiB(field string) float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

type newBackend func() backend.Interface

func backends() map[string]newBackend {
	cidr := netip.MustParsePrefix("10.128.0.0/9")
	return map[string]newBackend{
		"nftables": func() backend.Interface {
			cfg := nftables.Config{ClusterCIDR: cidr, MasqueradeBit: 14}
			return nftables.New(cfg, nftables.NewNetlink(cfg))
		},
		// The same rules through the nft binary, for comparison.
		"nftables-exec": func() backend.Interface {
			cfg := nftables.Config{ClusterCIDR: cidr, MasqueradeBit: 14}
			nft, err := nftables.NewInterface(cfg)
			if err != nil {
				panic(err)
			}
			return nftables.New(cfg, nftbatch.Exec{NFT: nft})
		},
		"iptables": func() backend.Interface {
			return iptables.New(iptables.Config{ClusterCIDR: cidr, MasqueradeBit: 14}, iptables.Commands{})
		},
	}
}

func sizes() []int {
	if s := os.Getenv("TRIREME_PROXY_BENCH_SERVICES"); s != "" {
		var out []int
		for _, f := range strings.Split(s, ",") {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	return []int{1000, 10000}
}

// modes are the back ends measured: TRIREME_PROXY_BENCH_MODES, a comma
// list of nftables (netlink), nftables-exec (the nft binary) and iptables.
func modes() []string {
	if s := os.Getenv("TRIREME_PROXY_BENCH_MODES"); s != "" {
		return strings.Split(s, ",")
	}
	return []string{"nftables", "iptables"}
}

// BenchmarkSync reports, per back end and Service count, the time of a
// full sync into an empty namespace, of a periodic full sync over the
// rules already there, and of a sync after one endpoint of one Service
// changed, with the rules held, the process's RSS (right
// after the syncs, its peak during them, and once freed memory went back
// to the OS, as the proxy does after full syncs; the process holds the
// model too), and the
// CPU time spent in nft or iptables-restore (tool-cpu) and in the proxy
// (proxy-cpu, which with the netlink writer includes the kernel's work on
// the batch, done inside the proxy's sendmsg): on a shared machine wall
// time mostly measures the others.
func BenchmarkSync(b *testing.B) {
	ctx := context.Background()
	for _, mode := range modes() {
		for _, n := range sizes() {
			// full writes into an empty table; full-resync is the
			// periodic full sync, over the rules and state a full sync left.
			for _, kind := range []string{"full", "full-resync"} {
				b.Run(fmt.Sprintf("%s/services=%d/%s", mode, n, kind), func(b *testing.B) {
					ns := newNetns(b)
					st := state(n)
					var be backend.Interface
					var err error
					ns.do(func() {
						be = backends()[mode]()
						if kind == "full-resync" {
							_, err = be.Sync(ctx, backend.Request{State: st, Full: true})
						}
					})
					if err != nil {
						b.Fatal(err)
					}
					debug.FreeOSMemory() // as the proxy does after a full sync
					var res backend.Result
					var cpu, self, sys time.Duration
					var peak float64
					for b.Loop() {
						b.StopTimer()
						if kind == "full" {
							ns.do(func() { err = be.Cleanup(ctx) })
							if err != nil {
								b.Fatal(err)
							}
						}
						resetPeakRSS()
						b.StartTimer()
						before, beforeSelf, beforeSys := childCPU(), selfCPU(), selfSys()
						ns.do(func() { res, err = be.Sync(ctx, backend.Request{State: st, Full: true}) })
						peak = max(peak, peakRSSMiB())
						cpu += childCPU() - before
						self += selfCPU() - beforeSelf
						sys += selfSys() - beforeSys
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(cpu.Seconds()/float64(b.N), "tool-cpu-s/op")
					b.ReportMetric(self.Seconds()/float64(b.N), "proxy-cpu-s/op")
					b.ReportMetric(sys.Seconds()/float64(b.N), "proxy-sys-s/op")
					b.ReportMetric(float64(res.Total), "rules")
					b.ReportMetric(rssMiB(), "RSS-MiB")
					b.ReportMetric(peak, "RSS-peak-MiB")
					// The proxy returns a full sync's garbage to the OS after it
					// (proxier.sync): what it holds between syncs.
					debug.FreeOSMemory()
					b.ReportMetric(rssMiB(), "RSS-held-MiB")
					runtime.KeepAlive(be) // the back end's state and the model count
					runtime.KeepAlive(st)
				})
			}
			for _, change := range []string{"one-endpoint-change", "one-endpoint-added"} {
				b.Run(fmt.Sprintf("%s/services=%d/%s", mode, n, change), func(b *testing.B) {
					ns := newNetns(b)
					st := state(n)
					var be backend.Interface
					var err error
					ns.do(func() {
						be = backends()[mode]()
						_, err = be.Sync(ctx, backend.Request{State: st, Full: true})
					})
					if err != nil {
						b.Fatal(err)
					}
					debug.FreeOSMemory() // as the proxy does after a full sync
					var res backend.Result
					var cpu, self, sys time.Duration
					var peak float64
					i := 0
					for b.Loop() {
						// Move one endpoint of one Service to a new address, or
						// add one (which changes the count of endpoints).
						b.StopTimer()
						name := model.ServicePortName{NamespacedName: types.NamespacedName{Namespace: "bench", Name: fmt.Sprintf("svc-%d", i%n)}, Port: "http", Protocol: v1.ProtocolTCP}
						sp := *st[name]
						sp.Endpoints = append([]model.Endpoint(nil), sp.Endpoints...)
						if change == "one-endpoint-added" {
							sp.Endpoints = append(sp.Endpoints, model.Endpoint{IP: addr(10, 200, i), Port: 8080, Ready: true, Serving: true, Remote: true})
						} else {
							sp.Endpoints[0].IP = addr(10, 200, i)
						}
						st[name] = &sp
						i++
						resetPeakRSS()
						b.StartTimer()
						before, beforeSelf, beforeSys := childCPU(), selfCPU(), selfSys()
						ns.do(func() {
							res, err = be.Sync(ctx, backend.Request{State: st, Changed: map[model.ServicePortName]struct{}{name: {}}})
						})
						peak = max(peak, peakRSSMiB())
						cpu += childCPU() - before
						self += selfCPU() - beforeSelf
						sys += selfSys() - beforeSys
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(cpu.Seconds()/float64(b.N), "tool-cpu-s/op")
					b.ReportMetric(self.Seconds()/float64(b.N), "proxy-cpu-s/op")
					b.ReportMetric(sys.Seconds()/float64(b.N), "proxy-sys-s/op")
					b.ReportMetric(float64(res.Rules), "rules-written")
					b.ReportMetric(float64(res.Total), "rules")
					b.ReportMetric(rssMiB(), "RSS-MiB")
					b.ReportMetric(peak, "RSS-peak-MiB")
					// The proxy returns a full sync's garbage to the OS after it
					// (proxier.sync): what it holds between syncs.
					debug.FreeOSMemory()
					b.ReportMetric(rssMiB(), "RSS-held-MiB")
					runtime.KeepAlive(be) // the back end's state and the model count
					runtime.KeepAlive(st)
				})
			}
		}
	}
}
