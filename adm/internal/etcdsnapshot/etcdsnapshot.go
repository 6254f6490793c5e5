// Package etcdsnapshot backs up and restores the local etcd member of a
// control-plane node, as etcdctl and etcdutl do for a kubeadm cluster: save
// streams a point-in-time snapshot over the client API, status reads one, and
// restore builds a fresh data directory from one for this member.
package etcdsnapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	clientsnapshot "go.etcd.io/etcd/client/v3/snapshot"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"

	"trireme.dev/adm/internal/staticpod"
)

// Member is the local etcd member, as its static pod runs it.
type Member struct {
	// Name, DataDir, PeerURL and InitialCluster are its --name, --data-dir,
	// --initial-advertise-peer-urls and --initial-cluster.
	Name, DataDir, PeerURL, InitialCluster string
	// Endpoint is the client URL on loopback, which the member always
	// listens on.
	Endpoint string
	// CAFile, CertFile and KeyFile are the client TLS triremeadm uses: the
	// etcd CA and the healthcheck client certificate it signed.
	CAFile, CertFile, KeyFile string
}

// LocalMember reads the member from the etcd static pod manifest in
// manifestsDir.
func LocalMember(manifestsDir string) (Member, error) {
	path := staticpod.Path(manifestsDir, staticpod.Etcd)
	pod, err := staticpod.Read(path)
	if err != nil {
		return Member{}, fmt.Errorf("read the local etcd member: %w (is this a control-plane node with local etcd?)", err)
	}
	if len(pod.Spec.Containers) == 0 {
		return Member{}, fmt.Errorf("%s has no container", path)
	}
	args := pod.Spec.Containers[0].Command
	args = append(args, pod.Spec.Containers[0].Args...)
	m := Member{}
	for _, f := range []struct {
		flag string
		to   *string
	}{
		{"name", &m.Name}, {"data-dir", &m.DataDir}, {"initial-advertise-peer-urls", &m.PeerURL},
		{"initial-cluster", &m.InitialCluster}, {"trusted-ca-file", &m.CAFile},
	} {
		v, ok := staticpod.Flag(args, f.flag)
		if !ok {
			return Member{}, fmt.Errorf("%s: etcd has no --%s", path, f.flag)
		}
		*f.to = v
	}
	listen, _ := staticpod.Flag(args, "listen-client-urls")
	for u := range strings.SplitSeq(listen, ",") {
		if strings.Contains(u, "://127.0.0.1:") {
			m.Endpoint = u
		}
	}
	if m.Endpoint == "" {
		return Member{}, fmt.Errorf("%s: etcd does not listen on 127.0.0.1 (--listen-client-urls=%s)", path, listen)
	}
	dir := filepath.Dir(m.CAFile)
	m.CertFile, m.KeyFile = filepath.Join(dir, "healthcheck-client.crt"), filepath.Join(dir, "healthcheck-client.key")
	return m, nil
}

// Status describes a snapshot file.
type Status struct {
	// Revision is the store's revision when the snapshot was taken.
	Revision int64
	// Keys is how many keys it holds, Bytes its size.
	Keys  int
	Bytes int64
	// Hash is the hash of its contents, Version the etcd storage version.
	Hash    uint32
	Version string
}

// Save writes a snapshot of the member to file, which must not exist: it is
// written to a temporary file first, checked against the server's hash, then
// renamed, so a failed save leaves nothing behind.
func Save(ctx context.Context, m Member, file string) (Status, error) {
	if _, err := os.Stat(file); err == nil {
		return Status{}, fmt.Errorf("%s exists: choose another file or remove it", file)
	}
	tlsConfig, err := transport.TLSInfo{CertFile: m.CertFile, KeyFile: m.KeyFile, TrustedCAFile: m.CAFile}.ClientConfig()
	if err != nil {
		return Status{}, fmt.Errorf("etcd client TLS: %w", err)
	}
	cfg := clientv3.Config{Endpoints: []string{m.Endpoint}, TLS: tlsConfig, DialTimeout: 10 * time.Second, Logger: zap.NewNop()}
	if _, err := clientsnapshot.SaveWithVersion(ctx, zap.NewNop(), cfg, file); err != nil {
		return Status{}, fmt.Errorf("save snapshot of %s to %s: %w", m.Endpoint, file, err)
	}
	return Read(file)
}

// Read returns the status of a snapshot file.
func Read(file string) (Status, error) {
	if _, err := os.Stat(file); err != nil {
		return Status{}, err
	}
	s, err := snapshot.NewV3(zap.NewNop()).Status(file)
	if err != nil {
		return Status{}, fmt.Errorf("read snapshot %s: %w", file, err)
	}
	return Status{Revision: s.Revision, Keys: s.TotalKey, Bytes: s.TotalSize, Hash: s.Hash, Version: s.Version}, nil
}

// Restore builds a data directory for m from the snapshot file in dataDir,
// which must not exist. The member keeps its name and peer URL; the cluster
// it bootstraps is the one its manifest names.
//
// The file is checked against the hash it carries first, so a corrupt or
// truncated one changes nothing.
//
// Restoring bumps the revision by a million and marks it compacted, as
// etcdutl advises for a cluster with watchers: clients (the apiserver's
// watch cache, informers) must never see a revision go backwards.
func Restore(file, dataDir string, m Member) error {
	if err := Verify(file); err != nil {
		return fmt.Errorf("refusing to restore: %w", err)
	}
	if _, err := os.Stat(dataDir); err == nil {
		return fmt.Errorf("%s exists: restore into a new directory", dataDir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	err := snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath:        file,
		Name:                m.Name,
		OutputDataDir:       dataDir,
		PeerURLs:            []string{m.PeerURL},
		InitialCluster:      m.InitialCluster,
		InitialClusterToken: "etcd-cluster",
		RevisionBump:        1_000_000,
		MarkCompacted:       true,
	})
	if err != nil {
		return fmt.Errorf("restore %s into %s: %w", file, dataDir, err)
	}
	return nil
}

// RestoreInto is Restore into the member's own data directory dir, which
// must be empty or missing (a new member: `triremeadm reset` first). dir
// may be a mount point (a disk of its own), so the member is restored into
// a directory below it and its files moved up.
func RestoreInto(file, dir string, m Member) error {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0:
		return fmt.Errorf("%s is not empty: a restored member starts from an empty data directory (`triremeadm reset` first)", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	staging := filepath.Join(dir, "restoring")
	if err := Restore(file, staging, m); err != nil {
		_ = os.RemoveAll(staging)
		return err
	}
	moved, err := os.ReadDir(staging)
	if err != nil {
		return err
	}
	for _, e := range moved {
		if err := os.Rename(filepath.Join(staging, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("move the restored member into %s: %w", dir, err)
		}
	}
	return os.Remove(staging)
}
