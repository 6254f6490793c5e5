package etcdmember

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

func TestDefragOrder(t *testing.T) {
	a, b, c := Member{ID: 1, Name: "a", ClientURLs: []string{"u"}}, Member{ID: 2, Name: "b", ClientURLs: []string{"u"}}, Member{ID: 3, Name: "c", ClientURLs: []string{"u"}}
	learner := Member{ID: 4, Name: "l", ClientURLs: []string{"u"}, IsLearner: true}
	unstarted := Member{ID: 5}
	for _, tc := range []struct {
		name   string
		list   []Member
		leader uint64
		want   string
	}{
		{"leader first in the list", []Member{a, b, c}, 1, "b c a"},
		{"leader in the middle", []Member{a, b, c}, 2, "a c b"},
		{"leader unknown", []Member{a, b, c}, 0, "a b c"},
		{"single member", []Member{a}, 1, "a"},
		{"learner and unstarted member left out", []Member{learner, a, unstarted, b}, 1, "b a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range DefragOrder(tc.list, tc.leader) {
				got = append(got, m.Name)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("order %v, want %s", got, tc.want)
			}
		})
	}
}

// TestNoSpaceRecovery fills a real etcd with a small quota until it raises
// NOSPACE, and recovers as `triremeadm etcd defrag --disarm` does: reads
// keep working meanwhile, writes fail with etcd's error, and after
// compaction, defragmentation and disarming writes work again.
func TestNoSpaceRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd")
	}
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	cfg.Logger, cfg.LogLevel = "zap", "error"
	cfg.QuotaBackendBytes = 4 << 20
	client, peer := freeURL(t), freeURL(t)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("etcd not ready")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cfg.AdvertiseClientUrls[0].String()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{c: cli}
	defer c.Close()
	ctx := context.Background()

	// Overwrite one key until the history exceeds the quota.
	value := strings.Repeat("x", 64<<10)
	var werr error
	for i := 0; i < 1000 && werr == nil; i++ {
		_, werr = cli.Put(ctx, "/registry/configmaps/default/big", fmt.Sprint(i, value))
	}
	if !errors.Is(werr, rpctypes.ErrNoSpace) {
		t.Fatalf("writes never ran out of space: %v", werr)
	}
	if _, err := cli.Get(ctx, "/registry/configmaps/default/big"); err != nil {
		t.Errorf("read under NOSPACE: %v", err)
	}
	alarms, err := c.Alarms(ctx)
	if err != nil || len(alarms) != 1 || alarms[0].Alarm != etcdserverpb.AlarmType_NOSPACE {
		t.Fatalf("alarms %v, %v", alarms, err)
	}

	if _, err := c.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	var results []DefragResult
	if err := c.Defragment(ctx, time.Minute, func(r DefragResult) { results = append(results, r) }); err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].After >= results[0].Before {
		t.Errorf("defragmentation results %+v", results)
	}
	if n, err := c.DisarmNoSpace(ctx); err != nil || n != 1 {
		t.Errorf("disarmed %d, %v", n, err)
	}
	if _, err := cli.Put(ctx, "/registry/configmaps/default/after", "ok"); err != nil {
		t.Errorf("write after recovery: %v", err)
	}
	if alarms, _ := c.Alarms(ctx); len(alarms) != 0 {
		t.Errorf("alarms after recovery: %v", alarms)
	}
}

// freeURL is an http URL on a loopback port nothing listens on.
func freeURL(t *testing.T) url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}
}
