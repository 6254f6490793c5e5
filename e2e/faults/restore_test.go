package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testwait"
)

// TestRestore (it runs last: it installs the cluster again) brings the
// whole cluster back from one etcd snapshot, as a user does after losing
// it: every node reset, `triremeadm init --etcd-restore FILE` on cp1, the
// other control-plane nodes and the worker joined again. What the snapshot
// held is back and what came after it is gone, the three etcd members
// agree, and the pod the snapshot held runs again on the worker. A
// truncated snapshot is refused first, with the cluster untouched.
func TestRestore(t *testing.T) {
	if cluster == nil {
		t.Skip("opt-in (it installs a cluster of network namespaces on this host): set TRIREME_E2E_FAULTS=1")
	}
	c, ctx := cluster, context.Background()
	cp1 := c.nodes[0]
	const ns, kept = "restore", 20
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range kept {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kept-%d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}}
		if _, err := c.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := startSteadyPod(t, c, "restored")

	dir := filepath.Join(c.root, "restore")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "snapshot.db")
	if out, err := cp1.adm("etcd", "snapshot", "save", file).CombinedOutput(); err != nil {
		t.Fatalf("etcd snapshot save: %v\n%s", err, out)
	}
	// After the snapshot: one object deleted, one created.
	if err := c.client.CoreV1().ConfigMaps(ns).Delete(ctx, "kept-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	truncated := file + ".truncated"
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := cp1.adm("init", "--etcd-restore", truncated, "--apiserver-advertise-address", cp1.IP.String(), "--node-name", cp1.Name).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nothing was changed") {
		t.Fatalf("init --etcd-restore of a truncated snapshot on a running node: %v\n%s", err, out)
	}
	if err := c.waitHealthy(ctx, time.Now(), time.Minute); err != nil {
		t.Fatalf("after init refused a truncated snapshot: %v", err)
	}

	// The disaster: every node reset, the worker first.
	start := time.Now()
	for i := len(c.nodes) - 1; i >= 0; i-- {
		n := c.nodes[i]
		if i == 2 {
			if err := c.unmountSmallDisk(); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := n.adm("reset", "-f").CombinedOutput(); err != nil {
			t.Fatalf("reset %s: %v\n%s", n.Name, err, out)
		}
	}
	logf("restore: 4 nodes reset: %s", since(start))
	if err := c.mountSmallDisk(); err != nil {
		t.Fatal(err)
	}
	if c.installedWith != c.adm {
		// The nodes hold the earlier build's images (the upgrade imported
		// only the control plane's): a user imports this build's first.
		for _, n := range c.nodes {
			if err := n.Import(n.imageArchives(testcluster.ImageDir())); err != nil {
				t.Fatal(err)
			}
		}
	}
	start = time.Now()
	if err := c.install(ctx, "--etcd-restore", file); err != nil {
		t.Fatal(err)
	}
	if err := c.waitHealthy(ctx, start, 3*time.Minute); err != nil {
		t.Fatalf("after the restore: %v", err)
	}
	logf("restore: the cluster installed again from the snapshot and healthy: %s", since(start))

	members, err := c.etcdMembers()
	if err != nil || len(members) != 3 {
		t.Errorf("etcd members after the restore: %v (%v), want 3 voting", members, err)
	}
	c.checkEtcdHashes(ctx, t)
	for i := range kept {
		name := fmt.Sprintf("kept-%d", i)
		cm, err := c.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || cm.Data["i"] != fmt.Sprint(i) {
			t.Errorf("ConfigMap %s/%s after the restore: %v %v", ns, name, cm.Data, err)
		}
	}
	if _, err := c.client.CoreV1().ConfigMaps(ns).Get(ctx, "after", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap %s/after, made after the snapshot, is there after the restore: %v", ns, err)
	}
	testwait.ForNil(t, 2*time.Minute, "the snapshot's pod running again on the worker", func() error {
		p, err := c.client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, pod.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(p.UID) != pod.uid {
			return fmt.Errorf("pod %s is another pod (uid %s, was %s)", pod.name, p.UID, pod.uid)
		}
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil ||
			p.Status.ContainerStatuses[0].ContainerID == pod.containerID {
			return fmt.Errorf("phase %s, containers %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		return nil
	})
}
