package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/adm/internal/clusterphases"
	"trireme.dev/adm/internal/copycerts"
	"trireme.dev/adm/internal/etcdmember"
	"trireme.dev/adm/internal/staticpod"
	"trireme.dev/adm/internal/workflow"
)

// etcdPromoteTimeout bounds how long a new etcd learner may take to catch up.
const etcdPromoteTimeout = 2 * time.Minute

// controlPlanePhases are join's phases for a control-plane node, in kubeadm's
// order, except that the control plane's manifests are written once the local
// etcd member votes: the apiserver on a learner would only crash-loop.
func (d *joinData) controlPlanePhases() []workflow.Phase {
	return []workflow.Phase{
		{Name: "preflight", Short: "Check that this machine can join", Run: d.preflight},
		{Name: "discovery", Short: "Find and trust the cluster through kube-public/cluster-info", Run: d.discover},
		{Name: "control-plane-prepare", Short: "Download the shared certificates and write this node's certificates and kubeconfigs", Run: d.prepareControlPlane},
		{Name: "container-runtime", Short: "Configure and start containerd", Run: d.containerRuntime},
		{Name: "images", Short: imagesPhaseShort, Run: d.images},
		{Name: "kubelet-start", Short: "Write the kubelet's configuration and start it", Run: d.kubeletStart},
		{Name: "etcd", Short: "Add this node's etcd member (a learner, then promoted) and write its static pod", Run: d.joinEtcd},
		{Name: "control-plane", Short: "Write the control plane's static pod manifests", Run: d.writeControlPlane},
		{Name: "wait-control-plane", Short: "Wait for this node's control plane to become healthy", Run: d.waitControlPlane},
		{Name: "mark-control-plane", Short: "Label and taint this node as a control-plane node", Run: d.markControlPlane},
	}
}

func (d *joinData) prepareControlPlane(ctx context.Context, s *workflow.Status) error {
	cfg := d.cfg
	c, err := clientFromConfig(d.bootstrap)
	if err != nil {
		return err
	}
	files, err := copycerts.Download(ctx, c, cfg.PKIDir(), d.certificateKey, cfg.Cluster.Etcd.External != nil)
	if err != nil {
		return err
	}
	s.Printf("downloaded and decrypted %d files from kube-system/%s", len(files), copycerts.SecretName)
	if err := writeCerts(cfg, s); err != nil {
		return err
	}
	return writeKubeconfigs(cfg, s)
}

// adminClient talks to the cluster as admin.conf (through the control-plane
// endpoint).
func (d *joinData) adminClient() (kubernetes.Interface, error) {
	return clientFor(d.cfg.Paths.Kubeconfig("admin.conf"))
}

func (d *joinData) joinEtcd(ctx context.Context, s *workflow.Status) error {
	cfg := d.cfg
	if cfg.Cluster.Etcd.External != nil {
		s.Printf("etcd is external: nothing to run")
		return nil
	}
	c, err := d.adminClient()
	if err != nil {
		return err
	}
	endpoints, err := etcdEndpoints(ctx, c)
	if err != nil {
		return err
	}
	ec, err := etcdmember.New(endpoints, cfg.PKIDir())
	if err != nil {
		return err
	}
	defer ec.Close()
	peerURL := "https://" + net.JoinHostPort(cfg.Init.LocalAPIEndpoint.AdvertiseAddress, strconv.Itoa(staticpod.EtcdPeerPort))
	id, initial, err := ec.AddLearner(ctx, cfg.NodeName(), peerURL)
	if err != nil {
		return err
	}
	s.Printf("added etcd learner %x (%s) through %v", id, peerURL, endpoints)
	cfg.EtcdInitialCluster = initial
	if err := os.MkdirAll(cfg.EtcdDataDir(), 0o700); err != nil {
		return err
	}
	path, err := staticpod.Write(cfg, staticpod.Etcd)
	if err != nil {
		return err
	}
	s.Printf("wrote %s (initial cluster %s)", path, initial)
	if err := capTCPBackoff(cfg.Paths, s); err != nil {
		return err
	}
	start := time.Now()
	if err := ec.Promote(ctx, id, etcdPromoteTimeout); err != nil {
		return err
	}
	s.Printf("promoted etcd member %x to a voter after %s", id, time.Since(start).Round(100*time.Millisecond))
	return writeEtcdSnapshot(cfg, s)
}

// etcdEndpoints are the client URLs of the cluster's etcd members, as their
// static pods advertise them (kubeadm's annotation), else the control-plane
// nodes' addresses.
func etcdEndpoints(ctx context.Context, c kubernetes.Interface) ([]string, error) {
	pods, err := c.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=" + staticpod.Etcd})
	if err != nil {
		return nil, fmt.Errorf("list etcd pods: %w", err)
	}
	var out []string
	for _, p := range pods.Items {
		if u := p.Annotations[staticpod.EtcdClientURLsAnnotation]; u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	if len(out) == 0 {
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: clusterphases.ControlPlaneLabel})
		if err != nil {
			return nil, fmt.Errorf("list control-plane nodes: %w", err)
		}
		for _, n := range nodes.Items {
			for _, a := range n.Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					out = append(out, "https://"+net.JoinHostPort(a.Address, strconv.Itoa(staticpod.EtcdClientPort)))
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("found no etcd member: no etcd pod advertises its client URL and no control-plane node has an address")
	}
	sort.Strings(out)
	return out, nil
}

func (d *joinData) writeControlPlane(_ context.Context, s *workflow.Status) error {
	return writeControlPlane(d.cfg, s)
}

func (d *joinData) waitControlPlane(ctx context.Context, s *workflow.Status) error {
	return waitControlPlane(ctx, d.cfg, s)
}

func (d *joinData) markControlPlane(ctx context.Context, s *workflow.Status) error {
	c, err := d.adminClient()
	if err != nil {
		return err
	}
	taints := []corev1.Taint{{Key: clusterphases.ControlPlaneLabel, Effect: corev1.TaintEffectNoSchedule}}
	if err := clusterphases.MarkControlPlane(ctx, c, d.cfg.NodeName(), taints, nodeTimeout); err != nil {
		return err
	}
	s.Printf("labelled node %s %s and tainted it NoSchedule", d.cfg.NodeName(), clusterphases.ControlPlaneLabel)
	return nil
}

// checkCertificateKey fails early on a missing or malformed key.
func checkCertificateKey(key string) error {
	if key == "" {
		return errors.New("--control-plane needs --certificate-key (init printed it; `triremeadm init phase upload-certs --upload-certs` makes a new one)")
	}
	return copycerts.CheckKey(key)
}
