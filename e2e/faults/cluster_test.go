package faults

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testwait"
	"trireme.dev/e2e/internal/netnsnode"
)

// The suite's network: the host at .1 (the nodes' gateway, where the load
// runs), the control-plane nodes at .11-.13, the worker at .21, the VIP at .100.
const (
	hostAddr = "10.214.9.1/24"
	vip      = "10.214.9.100"
	endpoint = vip + ":6443"
)

var suiteSwitch = netnsnode.Switch{
	Netns:     "trfsw",
	Bridge:    "trfbr0",
	HostIface: "trfhost0",
	HostPort:  "trfhostp",
	HostAddr:  netip.MustParsePrefix(hostAddr),
}

// nodeConfig is each node's --config: the kubelet neither evicts pods nor
// collects the imported images on a build machine's busy disk; its pods'
// cgroups are the node's own, so that freezing or resetting one node touches
// no other.
func nodeConfig(name string) []byte {
	return netnsnode.KubeletConfig(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard: {"nodefs.available": "1%", "imagefs.available": "1%", "memory.available": "50Mi"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, cgroupRoot(name))
}

func cgroupRoot(node string) string { return "/trireme-faults-" + node }

// node is one machine of the cluster.
type node struct {
	*netnsnode.Node
	controlPlane bool
}

// config is the node's --config file.
func (n *node) config() string { return filepath.Join(filepath.Dir(n.Root), n.Name+".yaml") }

// adm runs triremeadm args in the node, with its root directory.
func (n *node) adm(args ...string) *exec.Cmd {
	return n.Command(append(append([]string{n.Adm}, args...), "--root-dir", n.Root)...)
}

// haCluster is the suite's cluster: three control-plane nodes behind the
// VIP and one worker.
type haCluster struct {
	root string
	// adm is this build's triremeadm; installedWith the one that installed
	// the cluster, an earlier build's for the upgrade test.
	adm, installedWith string
	nodes              []*node
	// admin is cp1's admin.conf, which reaches the apiservers through the VIP.
	admin  string
	config *rest.Config
	client kubernetes.Interface
}

// newCluster describes the cluster: installed by installAdm (this build's or
// an earlier one's) with the images in imageDir.
func newCluster(root, adm, installAdm, imageDir string) *haCluster {
	c := &haCluster{root: root, adm: adm, installedWith: installAdm, admin: filepath.Join(root, "cp1/etc/trireme/admin.conf")}
	for i, name := range []string{"cp1", "cp2", "cp3", "w1"} {
		n := &node{Node: &netnsnode.Node{
			Name: "trf-" + name, Netns: "trf" + name, Port: "trf" + name + "h",
			IP:   netip.MustParseAddr(fmt.Sprintf("10.214.9.%d", 11+i)),
			Root: filepath.Join(root, name), Switch: &suiteSwitch, Adm: installAdm,
		}, controlPlane: i < 3}
		if !n.controlPlane {
			n.IP = netip.MustParseAddr("10.214.9.21")
		}
		n.Images = n.imageArchives(imageDir)
		c.nodes = append(c.nodes, n)
	}
	return c
}

// workerImages are the images a worker's pods run in the suite.
var workerImages = []string{"pause", "busybox"}

// imageArchives are the archives in dir of the images the node runs.
func (n *node) imageArchives(dir string) []string {
	if n.controlPlane {
		return testcluster.ImageArchives(dir, controlPlaneImages...)
	}
	return testcluster.ImageArchives(dir, workerImages...)
}

func (c *haCluster) controlPlane() []*node { return c.nodes[:3] }
func (c *haCluster) worker() *node         { return c.nodes[3] }

// node returns the node named name, or nil.
func (c *haCluster) node(name string) *node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// up creates the nodes, initializes cp1 with the VIP, joins cp2 and cp3 as
// control-plane nodes and w1 as a worker (install), and waits for every
// node to be Ready. It prints how long each step took.
func (c *haCluster) up(ctx context.Context) error {
	// What an interrupted earlier run may have left (the names are the suite's own).
	c.deleteNetwork()
	if err := suiteSwitch.Create(); err != nil {
		return err
	}
	start := time.Now()
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		if err := os.MkdirAll(n.Root, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(n.config(), nodeConfig(n.Name), 0o600); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.Create()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	logf("4 nodes with their containerd and images: %s", since(start))
	if err := c.mountSmallDisk(); err != nil {
		return err
	}
	return c.install(ctx)
}

// mountSmallDisk gives cp3's etcd a disk of its own, small enough to fill.
func (c *haCluster) mountSmallDisk() error {
	smallDisk := c.nodes[2].etcdDataDir()
	if err := os.MkdirAll(smallDisk, 0o700); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", smallDisk, "tmpfs", 0, "size="+etcdDiskSize+",mode=0700"); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", smallDisk, err)
	}
	return nil
}

// growSmallDisk gives cp3's etcd disk size bytes of room (tmpfs keeps its
// contents through a remount).
func (c *haCluster) growSmallDisk(size string) error {
	dir := c.nodes[2].etcdDataDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, "size="+size+",mode=0700"); err != nil {
		return fmt.Errorf("grow the tmpfs on %s to %s: %w", dir, size, err)
	}
	return nil
}

// unmountSmallDisk takes cp3's etcd disk away, lazily: the member may
// still be running there until a reset stops it.
func (c *haCluster) unmountSmallDisk() error {
	dir := c.nodes[2].etcdDataDir()
	if !isMountPoint(dir) {
		return nil
	}
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// install initializes cp1 (with initArgs added), joins cp2 and cp3 as
// control-plane nodes and w1 as a worker, and waits for every node to be
// Ready, on nodes created (or reset) before.
func (c *haCluster) install(ctx context.Context, initArgs ...string) error {
	start := time.Now()
	cp1 := c.nodes[0]
	args := append([]string{"init", "--apiserver-advertise-address", cp1.IP.String(), "--node-name", cp1.Name, "--config", cp1.config(),
		"--control-plane-endpoint", endpoint, "--control-plane-vip", "--upload-certs", "--skip-phases", "addon"}, initArgs...)
	out, err := cp1.adm(args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("init of %s: %w\n%s", cp1.Name, err, out)
	}
	logf("triremeadm init --control-plane-endpoint %s --control-plane-vip --upload-certs %s: %s", endpoint, strings.Join(initArgs, " "), since(start))
	cpJoin := netnsnode.ControlPlaneJoinCommand(string(out))
	workerJoin := netnsnode.JoinCommand(string(out))
	if cpJoin == nil || workerJoin == "" {
		return fmt.Errorf("init printed no join commands:\n%s", out)
	}
	if c.config, err = clientcmd.BuildConfigFromFlags("", c.admin); err != nil {
		return fmt.Errorf("admin.conf: %w", err)
	}
	if c.client, err = kubernetes.NewForConfig(c.config); err != nil {
		return err
	}
	// Joins one at a time, as etcd changes membership one member at a time.
	for _, n := range c.nodes[1:3] {
		start := time.Now()
		args := append(append([]string{}, cpJoin...), "--node-name", n.Name, "--node-ip", n.IP.String(), "--config", n.config())
		out, err := n.adm(args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("join --control-plane of %s: %w\n%s\n%s", n.Name, err, out, n.logTail("kubelet", 30))
		}
		logf("triremeadm join --control-plane (%s): %s; its slower phases: %s", n.Name, since(start), slowPhases(string(out), time.Second))
	}
	start = time.Now()
	if err := c.worker().Join(workerJoin, c.worker().config()); err != nil {
		return err
	}
	logf("triremeadm join (%s): %s", c.worker().Name, since(start))
	for _, n := range c.nodes {
		if _, err := c.kubectl(ctx, "wait", "--for=condition=Ready", "node/"+n.Name, "--timeout=120s"); err != nil {
			return err
		}
	}
	return nil
}

// slowPhases picks the phases that took at least min from triremeadm's
// status lines ("[etcd] Add this node's etcd member ... ok (12.3s)").
func slowPhases(out string, min time.Duration) string {
	var slow []string
	for _, l := range strings.Split(out, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "["), "] ")
		if !ok {
			continue
		}
		_, took, ok := strings.Cut(rest, " ... ok (")
		if d, err := time.ParseDuration(strings.TrimSuffix(took, ")")); ok && err == nil && d >= min {
			slow = append(slow, name+" "+d.String())
		}
	}
	if len(slow) == 0 {
		return "none"
	}
	return strings.Join(slow, ", ")
}

// down resets every node, worker first and cp1 last, and removes the
// network. It returns what went wrong or was left behind: a control-plane
// node whose reset did not remove its etcd member or the VIP, etcd members
// other than cp1's before cp1's reset, processes, cgroups, mounts, and files
// below the root other than the logs, images and etcd snapshots reset keeps.
func (c *haCluster) down() error {
	var problems []string
	for i := len(c.nodes) - 1; i >= 0; i-- {
		n := c.nodes[i]
		if !n.Exists() {
			continue
		}
		if i == 2 {
			if err := c.unmountSmallDisk(); err != nil {
				problems = append(problems, err.Error())
			}
		}
		if i == 0 && c.config != nil {
			if members, err := c.etcdMembers(); err != nil || len(members) != 1 {
				problems = append(problems, fmt.Sprintf("etcd members before %s's reset: %v (%v), want its own alone", n.Name, members, err))
			}
		}
		out, err := n.adm("reset", "-f").CombinedOutput()
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("reset %s: %v\n%s", n.Name, err, out))
		case n.controlPlane && i > 0 && !strings.Contains(string(out), "removed this node's etcd member"):
			problems = append(problems, fmt.Sprintf("reset of %s did not remove its etcd member:\n%s", n.Name, out))
		}
		if out, _ := n.Command("ip", "-4", "addr").CombinedOutput(); strings.Contains(string(out), vip) {
			problems = append(problems, fmt.Sprintf("%s still holds the VIP after reset", n.Name))
		}
	}
	if left := processesBelow(c.root); len(left) > 0 {
		problems = append(problems, fmt.Sprintf("processes left: %v", left))
		for _, p := range left {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	for _, n := range c.nodes {
		for _, hierarchy := range []string{"memory", "freezer"} {
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", hierarchy, cgroupRoot(n.Name))); err == nil {
				problems = append(problems, fmt.Sprintf("the %s cgroups of %s's pods are left", hierarchy, n.Name))
			}
		}
		if files := filesBelow(n.Root); len(files) > 0 {
			problems = append(problems, fmt.Sprintf("files of %s left: %v", n.Name, files))
		}
	}
	c.deleteNetwork()
	if mounts := netnsnode.MountsBelow(c.root); len(mounts) > 0 {
		problems = append(problems, fmt.Sprintf("mounts left: %v", mounts))
		for _, m := range mounts {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// filesBelow lists the files below dir that reset should have removed: all
// but the logs, containerd's root with the imported images and the scheduled
// etcd snapshots, which reset keeps as kubeadm does.
func filesBelow(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && (strings.HasSuffix(p, "/var/log/trireme") || strings.HasSuffix(p, "/var/lib/containerd") ||
			strings.HasSuffix(p, "/var/lib/trireme/etcd-snapshots")):
			return filepath.SkipDir
		case !d.IsDir():
			out = append(out, p)
		}
		return nil
	})
	return out
}

// etcdDiskSize is the size of cp3's etcd disk: room for etcd's
// preallocated WAL segments (64 MiB each) and the load's data.
const etcdDiskSize = "512m"

// etcdDataDir is where the node's etcd member keeps its data.
func (n *node) etcdDataDir() string { return filepath.Join(n.Root, "var/lib/trireme/etcd") }

// isMountPoint says whether dir is a mount point.
func isMountPoint(dir string) bool {
	for _, m := range netnsnode.MountsBelow(filepath.Dir(dir)) {
		if m == dir {
			return true
		}
	}
	return false
}

// etcdMembers lists the voting members' names (learners marked).
func (c *haCluster) etcdMembers() ([]string, error) {
	cli, err := c.etcdClient(c.nodes[0])
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("etcd member list: %w", err)
	}
	var names []string
	for _, m := range resp.Members {
		if m.IsLearner {
			names = append(names, m.Name+" (learner)")
		} else {
			names = append(names, m.Name)
		}
	}
	return names, nil
}

func (c *haCluster) deleteNetwork() {
	for _, n := range c.nodes {
		n.Delete()
	}
	suiteSwitch.Delete()
}

// kubectl runs kubectl as the cluster's admin, through the VIP.
func (c *haCluster) kubectl(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", c.admin}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// healthy says what of the cluster is not yet as it was before a fault:
// each apiserver ready on its own address, each etcd member answering, each
// node Ready, every control-plane pod ready, the VIP held, a
// controller-manager and a scheduler leading (their Leases renewed after
// since). nil when all is well.
func (c *haCluster) healthy(ctx context.Context, since time.Time) error {
	var problems []error
	for _, n := range c.controlPlane() {
		if _, err := c.kubectl(ctx, "--request-timeout=2s", "--server", "https://"+n.IP.String()+":6443", "get", "--raw", "/readyz"); err != nil {
			problems = append(problems, fmt.Errorf("%s's apiserver: %w", n.Name, err))
		}
	}
	if _, err := c.etcdStatus(ctx); err != nil {
		problems = append(problems, err)
	}
	out, err := c.kubectl(ctx, "--request-timeout=2s", "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`)
	if err != nil {
		problems = append(problems, err)
	} else if strings.Count(out, "=True") != len(c.nodes) {
		problems = append(problems, fmt.Errorf("nodes not all Ready: %s", out))
	}
	out, err = c.kubectl(ctx, "--request-timeout=2s", "get", "pods", "-n", "kube-system", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}`)
	if err != nil {
		problems = append(problems, err)
	} else {
		for _, p := range strings.Fields(out) {
			if !strings.HasSuffix(p, "=True") {
				problems = append(problems, fmt.Errorf("pod %s not ready", strings.TrimSuffix(p, "=")))
			}
		}
	}
	if h, err := c.vipHolder(ctx); err != nil || c.node(h) == nil {
		problems = append(problems, fmt.Errorf("VIP holder %q: %v", h, err))
	}
	for _, lease := range []string{"kube-controller-manager", "kube-scheduler"} {
		out, err := c.kubectl(ctx, "--request-timeout=2s", "get", "lease", "-n", "kube-system", lease, "-o", "jsonpath={.spec.renewTime}")
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if renewed, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(out)); err != nil || !renewed.After(since) {
			problems = append(problems, fmt.Errorf("lease %s last renewed %q, not since %s", lease, out, since.Format(time.RFC3339Nano)))
		}
	}
	return errors.Join(problems...)
}

// vipHolder is the node holding the VIP's Lease.
func (c *haCluster) vipHolder(ctx context.Context) (string, error) {
	return c.kubectl(ctx, "--request-timeout=2s", "get", "lease", "-n", "kube-system", "trireme-vip", "-o", "jsonpath={.spec.holderIdentity}")
}

// vipMove says where and when the VIP went after start, when it left
// holder: the part of a gap on the holder that is the election's.
func (c *haCluster) vipMove(ctx context.Context, holder string, start time.Time) string {
	out, err := c.kubectl(ctx, "--request-timeout=2s", "get", "lease", "-n", "kube-system", "trireme-vip", "-o", "jsonpath={.spec.holderIdentity} {.spec.acquireTime}")
	if err != nil {
		return err.Error()
	}
	to, at, _ := strings.Cut(strings.TrimSpace(out), " ")
	acquired, err := time.Parse(time.RFC3339Nano, at)
	if to == holder || err != nil || acquired.Before(start) {
		return fmt.Sprintf("the VIP stayed on %s", holder)
	}
	return fmt.Sprintf("the VIP moved to %s %s after the fault", to, acquired.Sub(start).Round(10*time.Millisecond))
}

// etcdClient reaches the members at the given nodes' addresses with cp1's
// healthcheck client certificate.
func (c *haCluster) etcdClient(nodes ...*node) (*clientv3.Client, error) {
	pki := filepath.Join(c.nodes[0].Root, "etc/trireme/pki/etcd")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "healthcheck-client.crt"), filepath.Join(pki, "healthcheck-client.key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	var endpoints []string
	for _, n := range nodes {
		endpoints = append(endpoints, etcdEndpoint(n))
	}
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 3 * time.Second, Logger: zap.NewNop(),
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}})
}

func etcdEndpoint(n *node) string { return "https://" + n.IP.String() + ":2379" }

// maxRaftLag is how far behind the leader's log a member may have applied
// and count as caught up: a few seconds of the suite's load.
const maxRaftLag = 1000

// etcdMemberStatus asks every member for its status.
func (c *haCluster) etcdMemberStatus(ctx context.Context) (map[*node]*clientv3.StatusResponse, error) {
	cli, err := c.etcdClient(c.controlPlane()...)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	out := map[*node]*clientv3.StatusResponse{}
	for _, n := range c.controlPlane() {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		s, err := cli.Status(sctx, etcdEndpoint(n))
		cancel()
		if err != nil {
			return nil, fmt.Errorf("etcd member of %s: %w", n.Name, err)
		}
		out[n] = s
	}
	return out, nil
}

// etcdStatus fails unless every member answers, all agree on one leader
// and have caught up with its log (a member back from a partition that has
// not, and one other member lost, leave etcd without a quorum that can
// commit). It returns the leader's node.
func (c *haCluster) etcdStatus(ctx context.Context) (*node, error) {
	members, err := c.etcdMemberStatus(ctx)
	if err != nil {
		return nil, err
	}
	return settledLeader(members)
}

// settledLeader is etcdStatus's verdict on the members' statuses.
func settledLeader(members map[*node]*clientv3.StatusResponse) (*node, error) {
	var leaderID uint64
	for _, s := range members {
		if leaderID != 0 && s.Leader != leaderID {
			return nil, fmt.Errorf("etcd members disagree on their leader")
		}
		leaderID = s.Leader
	}
	leader := etcdLeader(members)
	if leader == nil {
		return nil, fmt.Errorf("etcd's leader %x is none of the members", leaderID)
	}
	head := members[leader].RaftIndex
	for n, s := range members {
		if s.RaftAppliedIndex+maxRaftLag < head {
			return nil, fmt.Errorf("etcd member of %s has applied its log to %d, %d behind the leader's", n.Name, s.RaftAppliedIndex, head-s.RaftAppliedIndex)
		}
	}
	return leader, nil
}

// etcdLeader is the node whose member says it leads, nil if none does.
func etcdLeader(members map[*node]*clientv3.StatusResponse) *node {
	for n, s := range members {
		if s.Header.MemberId == s.Leader {
			return n
		}
	}
	return nil
}

// moveEtcdLeader makes n's member etcd's leader, and waits until it is.
func (c *haCluster) moveEtcdLeader(ctx context.Context, n *node) error {
	members, err := c.etcdMemberStatus(ctx)
	if err != nil {
		return err
	}
	leader, err := settledLeader(members)
	if err != nil || leader == n {
		return err
	}
	cli, err := c.etcdClient(leader)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.MoveLeader(ctx, members[n].Header.MemberId); err != nil {
		return fmt.Errorf("move etcd's leader from %s to %s: %w", leader.Name, n.Name, err)
	}
	return testwait.Poll{Interval: 200 * time.Millisecond}.Until(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		l, err := c.etcdStatus(ctx)
		return err == nil && l == n, err
	})
}

// etcdProgress is each member's applied index, the leader marked: what a
// fault's recovery depends on.
func (c *haCluster) etcdProgress(ctx context.Context) string {
	members, err := c.etcdMemberStatus(ctx)
	if err != nil {
		return err.Error()
	}
	leader := etcdLeader(members)
	var parts []string
	for _, n := range c.controlPlane() {
		p := fmt.Sprintf("%s %d", n.Name, members[n].RaftAppliedIndex)
		if n == leader {
			p += " (leader)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// etcdHashes returns each member's hash of its key space at one revision,
// with the revision.
func (c *haCluster) etcdHashes(ctx context.Context) (map[string]uint32, int64, error) {
	cli, err := c.etcdClient(c.controlPlane()...)
	if err != nil {
		return nil, 0, err
	}
	defer cli.Close()
	s, err := cli.Status(ctx, etcdEndpoint(c.nodes[0]))
	if err != nil {
		return nil, 0, err
	}
	rev := s.Header.Revision
	hashes := map[string]uint32{}
	for _, n := range c.controlPlane() {
		h, err := cli.HashKV(ctx, etcdEndpoint(n), rev)
		if err != nil {
			return nil, 0, fmt.Errorf("hash of %s's member at revision %d: %w", n.Name, rev, err)
		}
		hashes[n.Name] = h.Hash
	}
	return hashes, rev, nil
}

// proc is a process of this machine.
type proc = netnsnode.Process

func procs() []proc { return netnsnode.Processes() }

// processesBelow are the processes whose command line names a path below dir.
func processesBelow(dir string) []proc {
	var out []proc
	for _, p := range procs() {
		if strings.Contains(p.Cmdline, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// processes are the node's processes: its containerd, kubelet and their
// supervisors and shims (their command lines name the node's root), and
// every process of its pods (in the node's own cgroups).
func (n *node) processes() []proc {
	var out []proc
	for _, p := range procs() {
		if strings.Contains(p.Cmdline, n.Root+"/") {
			out = append(out, p)
			continue
		}
		if cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p.PID)); err == nil && strings.Contains(string(cg), cgroupRoot(n.Name)+"/") {
			out = append(out, p)
		}
	}
	return out
}

// process finds the node's one process whose program is binary.
func (n *node) process(binary string) (proc, error) {
	var found []proc
	for _, p := range n.processes() {
		if f := strings.Fields(p.Cmdline); len(f) > 0 && filepath.Base(f[0]) == binary {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		return proc{}, fmt.Errorf("%d processes of %s on %s, want 1", len(found), binary, n.Name)
	}
	return found[0], nil
}

// leads reports whether the node's running instance of component (the
// newest log of its static pod's container) acquired its lease.
func (n *node) leads(component string) bool {
	logs, _ := filepath.Glob(filepath.Join(n.Root, "var/log/pods", "kube-system_"+component+"-"+n.Name+"_*", "*", "*.log"))
	newest, at := "", time.Time{}
	for _, l := range logs {
		if fi, err := os.Stat(l); err == nil && fi.ModTime().After(at) {
			newest, at = l, fi.ModTime()
		}
	}
	data, err := os.ReadFile(newest)
	return err == nil && strings.Contains(strings.ToLower(string(data)), "successfully acquired lease")
}

// logTail is the end of one of the node's logs (kubelet, containerd).
func (n *node) logTail(name string, lines int) string {
	data, _ := os.ReadFile(n.Log(name))
	return testcluster.Tail(string(data), lines)
}

func logf(format string, args ...any) { fmt.Printf("e2e/faults: "+format+"\n", args...) }

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// TestHAControlPlane checks the cluster as installed, before any fault: the
// control-plane nodes labelled and tainted as such, etcd with three voting
// members, one controller-manager and one scheduler leading, the VIP held by
// a control-plane node. (Its reset is checked by the suite's teardown.)
func TestHAControlPlane(t *testing.T) {
	if cluster == nil {
		t.Skip("opt-in (it installs a cluster of network namespaces on this host): set TRIREME_E2E_FAULTS=1")
	}
	c, ctx := cluster, context.Background()
	for _, n := range c.controlPlane() {
		out, err := c.kubectl(ctx, "get", "node", n.Name, "-o", "jsonpath={.metadata.labels}{.spec.taints}")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "node-role.kubernetes.io/control-plane") || !strings.Contains(out, "NoSchedule") {
			t.Errorf("node %s is not labelled and tainted as a control-plane node: %s", n.Name, out)
		}
	}
	members, err := c.etcdMembers()
	if err != nil || len(members) != 3 || strings.Contains(strings.Join(members, ","), "learner") {
		t.Errorf("etcd members %v (%v), want 3 voting members", members, err)
	}
	for _, lease := range []string{"kube-scheduler", "kube-controller-manager"} {
		testwait.ForNil(t, time.Minute, lease+" leader", func() error {
			out, err := c.kubectl(ctx, "get", "lease", "-n", "kube-system", lease, "-o", "jsonpath={.spec.holderIdentity}")
			if err == nil && out == "" {
				err = fmt.Errorf("no holder")
			}
			return err
		})
		var leaders []string
		for _, n := range c.controlPlane() {
			if n.leads(lease) {
				leaders = append(leaders, n.Name)
			}
		}
		if len(leaders) != 1 {
			t.Errorf("%s instances that acquired the lease: %v, want 1", lease, leaders)
		}
	}
	if h, err := c.vipHolder(ctx); err != nil || c.node(h) == nil || !c.node(h).controlPlane {
		t.Errorf("VIP holder %q (%v), want a control-plane node", h, err)
	}
}

func TestSlowPhases(t *testing.T) {
	out := "[preflight] Check that this machine can join ... ok (20ms)\n" +
		"[etcd] Add this node's etcd member (a learner, then promoted) and write its static pod ... ok (12.3s)\n" +
		"[etcd] learner promoted\n" +
		"[wait-control-plane] Wait for this node's control plane to become healthy ... ok (1.5s)\n"
	if got, want := slowPhases(out, time.Second), "etcd 12.3s, wait-control-plane 1.5s"; got != want {
		t.Errorf("slowPhases = %q, want %q", got, want)
	}
	if got := slowPhases("no phases", time.Second); got != "none" {
		t.Errorf("slowPhases of no status lines = %q", got)
	}
}
