package cluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
)

// TestEtcdSnapshot: `triremeadm etcd snapshot save` backs up the running
// member, `status` reads the file, and `restore` builds a data directory an
// etcd starts on with the cluster's objects in it.
func TestEtcdSnapshot(t *testing.T) {
	begin(t)
	must(t, "-n", "default", "create", "configmap", "snapshot-marker", "--from-literal=k=v")
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.db")
	adm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(suite.adm, admArgs(args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("triremeadm %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	t.Log(adm("etcd", "snapshot", "save", file))
	status := adm("etcd", "snapshot", "status", file)
	t.Log(status)
	if m := regexp.MustCompile(`\n[0-9a-f]{8}\s+(\d+)\s+(\d+)\s`).FindStringSubmatch(status); m == nil || m[2] == "0" {
		t.Fatalf("status shows no keys:\n%s", status)
	}
	restored := filepath.Join(dir, "restored")
	t.Log(adm("etcd", "snapshot", "restore", file, "--data-dir", restored))

	// The restored member keeps its name and peer URL; started alone on
	// loopback ports it serves the snapshot's keys.
	etcd, err := testcluster.Binary("etcd")
	if err != nil {
		t.Fatal(err)
	}
	clientPort, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	peerPort, err := freeport.Get()
	if err != nil {
		t.Fatal(err)
	}
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	var log bytes.Buffer
	p, err := testcluster.StartProcess(etcd, []string{
		"--data-dir", restored, "--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", "http://127.0.0.1:" + strconv.Itoa(peerPort), "--log-level", "warn",
	}, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(testcluster.DefaultStopTimeout); err != nil {
			t.Errorf("stop restored etcd: %v", err)
		}
		if t.Failed() {
			t.Logf("restored etcd's log:\n%s", log.String())
		}
		_ = os.RemoveAll(restored)
	}()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	slowly.ForNil(t, 60*time.Second, "the marker in the restored etcd", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := c.Get(ctx, testcluster.StoragePrefix+"/configmaps/default/snapshot-marker")
		if err == nil && len(r.Kvs) == 0 {
			err = os.ErrNotExist
		}
		return err
	})
}
