// Package etcd runs the embedded etcd of the apiserver's standalone dev mode.
package etcd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"trireme.dev/componentbase/freeport"
)

// Embedded is a single-member etcd serving on loopback.
type Embedded struct {
	etcd *embed.Etcd
	// ClientURL is where the apiserver reaches it.
	ClientURL string
}

// Start runs etcd with its data in dir. The loopback ports it picks are kept
// in dir so a restart finds the member where it left it.
func Start(ctx context.Context, dir string, logger *zap.Logger) (*Embedded, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create etcd dir: %w", err)
	}
	client, peer, err := ports(filepath.Join(dir, "ports"))
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "trireme"
	cfg.Dir = filepath.Join(dir, "data")
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(client))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peer))}
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.Name + "=" + peerURL.String()
	cfg.ListenMetricsUrls = nil
	cfg.QuotaBackendBytes = 8 << 30
	// etcd narrates every start at info level; keep its warnings only.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger.Named("etcd").WithOptions(zap.IncreaseLevel(zapcore.WarnLevel)))
	cfg.LogLevel = "warn"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after 60s")
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	}
	return &Embedded{etcd: e, ClientURL: clientURL.String()}, nil
}

// Stop shuts etcd down.
func (e *Embedded) Stop() { e.etcd.Close() }

// ports returns the client and peer ports recorded in path, choosing two
// free ones the first time.
func ports(path string) (int, int, error) {
	if b, err := os.ReadFile(path); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 {
			c, err1 := strconv.Atoi(f[0])
			p, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil {
				return c, p, nil
			}
		}
	}
	c, err := freeport.Get()
	if err != nil {
		return 0, 0, err
	}
	p, err := freeport.Get()
	if err != nil {
		return 0, 0, err
	}
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%d %d\n", c, p)), 0o600); err != nil {
		return 0, 0, fmt.Errorf("record etcd ports: %w", err)
	}
	return c, p, nil
}
