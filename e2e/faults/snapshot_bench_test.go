package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	// snapshotDBSize is the size of etcd's database the benchmark snapshots.
	snapshotDBSize = 1 << 30
	// fillObjectSize is the data of each ConfigMap that fills it: well
	// under etcd's 1.5 MiB request limit, base64 in JSON included.
	fillObjectSize = 768 << 10
	fillWriters    = 4
	// baselineFor is how long the load runs, before the snapshot, to give
	// the latency the snapshot is compared with.
	baselineFor = 20 * time.Second
)

// BenchmarkSnapshot1GB fills etcd to a 1 GiB database (keys of its own
// beside the apiserver's), then times `triremeadm etcd snapshot save` on the first
// control-plane node under the suite's write load, and sets the load's
// latency while the snapshot streams beside its latency just before.
func BenchmarkSnapshot1GB(b *testing.B) {
	if cluster == nil {
		b.Skip("opt-in (it installs a cluster of network namespaces on this host): set TRIREME_E2E_FAULTS=1")
	}
	c, ctx := cluster, context.Background()
	// cp3's member is on the suite's small disk (RAM), made for the
	// disk-full fault: room for the whole database and its WAL.
	if err := c.growSmallDisk("3g"); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	size, err := c.fill(ctx, "/trireme-bench", snapshotDBSize)
	if err != nil {
		b.Fatal(err)
	}
	logf("etcd filled to %d MiB in %s", size>>20, since(start))
	l, err := startLoad(ctx, c.config, "snapshot-load")
	if err != nil {
		b.Fatal(err)
	}
	defer l.stop()
	l.waitStarted(b)
	before := time.Now()
	time.Sleep(baselineFor)
	base := l.ledger.Window(before, time.Now())
	leader, err := c.etcdStatus(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cp1 := c.nodes[0]
	dir := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		file := filepath.Join(dir, fmt.Sprintf("snapshot-%d.db", i))
		start := time.Now()
		if out, err := cp1.adm("etcd", "snapshot", "save", file).CombinedOutput(); err != nil {
			b.Fatalf("etcd snapshot save: %v\n%s", err, out)
		}
		took := time.Since(start)
		during := l.ledger.Window(start, time.Now())
		fi, err := os.Stat(file)
		if err != nil {
			b.Fatal(err)
		}
		logf("snapshot of %s's member (etcd leader %s): %d MiB in %s; the load's writes p50/p99 %s/%s (just before: %s/%s), %d of %d failed, longest without an acknowledged write %s",
			cp1.Name, leader.Name, fi.Size()>>20, took.Round(10*time.Millisecond), ms(during.P50), ms(during.P99),
			ms(base.P50), ms(base.P99), during.Failed, during.Requests, ms(during.LongestGap))
		b.ReportMetric(took.Seconds(), "snapshot-s")
		b.ReportMetric(float64(fi.Size())/(1<<20), "snapshot-MiB")
		b.ReportMetric(float64(during.P99.Milliseconds()), "p99-during-ms")
		b.ReportMetric(float64(base.P99.Milliseconds()), "p99-before-ms")
		b.ReportMetric(float64(during.Failed), "failed")
		if err := os.Remove(file); err != nil {
			b.Fatal(err)
		}
	}
}

func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// fill writes keys of random data below prefix straight into etcd until
// the leader's database is at least size bytes; it returns the size
// reached. Not through the apiserver: each apiserver would hold every
// object in its watch cache (5 GiB of RSS apiece at 0.9 GiB of
// ConfigMaps), and three of them with three members do not fit one machine.
func (c *haCluster) fill(ctx context.Context, prefix string, size int64) (int64, error) {
	cli, err := c.etcdClient(c.controlPlane()...)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		failed  error
	)
	for w := range fillWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := make([]byte, fillObjectSize)
			r := rand.NewChaCha8([32]byte{byte(w)})
			for ctx.Err() == nil {
				_, _ = r.Read(data) // random: etcd stores it as it comes
				key := fmt.Sprintf("%s/fill-%d", prefix, next.Add(1))
				if _, err := cli.Put(ctx, key, string(data)); err != nil && ctx.Err() == nil {
					errOnce.Do(func() { failed = fmt.Errorf("put %s: %w", key, err) })
					cancel()
				}
			}
		}()
	}
	var reached int64
	// etcd, busy with the writes, may not answer every status in time.
	lastSeen := time.Now()
	for ctx.Err() == nil {
		got, err := c.dbSize(ctx)
		switch {
		case err == nil:
			reached, lastSeen = got, time.Now()
		case time.Since(lastSeen) > time.Minute:
			cancel()
			wg.Wait()
			return reached, fmt.Errorf("etcd's database size: %w", err)
		}
		if reached >= size {
			cancel()
			break
		}
		time.Sleep(time.Second)
	}
	wg.Wait()
	return reached, failed
}

// dbSize is the etcd leader's database size.
func (c *haCluster) dbSize(ctx context.Context) (int64, error) {
	members, err := c.etcdMemberStatus(ctx)
	if err != nil {
		return 0, err
	}
	leader := etcdLeader(members)
	if leader == nil {
		return 0, errors.New("no etcd member leads")
	}
	return members[leader].DbSize, nil
}
