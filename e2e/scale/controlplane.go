package scale

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testpki"
)

// Flavour names whose control plane runs.
type Flavour string

// The control planes the harness can bring up.
const (
	Trireme  Flavour = "trireme"
	Upstream Flavour = "upstream"
)

// Settings are what both control planes run with, printed with the figures
// so that a reader can tell the comparison is fair.
type Settings struct {
	// GOGC and GOMEMLIMIT are exported to every component ("" leaves the
	// Go default).
	GOGC, GOMEMLIMIT string
	// QPS and Burst are the scheduler's and controller-manager's client
	// connection limits.
	QPS   float32
	Burst int32
	// PercentageOfNodesToScore is the scheduler's.
	PercentageOfNodesToScore int32
	// NodeMonitorGracePeriod is the node lifecycle controller's.
	NodeMonitorGracePeriod time.Duration
}

// String is one line stating the settings.
func (s Settings) String() string {
	orUnset := func(v string) string {
		if v == "" {
			return "unset"
		}
		return v
	}
	return fmt.Sprintf("GOGC=%s GOMEMLIMIT=%s scheduler+controller-manager clientConnection qps=%g burst=%d percentageOfNodesToScore=%d node-monitor-grace-period=%s etcd: one external member (make build's), --unsafe-no-fsync",
		orUnset(s.GOGC), orUnset(s.GOMEMLIMIT), s.QPS, s.Burst, s.PercentageOfNodesToScore, s.NodeMonitorGracePeriod)
}

// ControlPlane is a running etcd, apiserver, controller-manager and
// scheduler.
type ControlPlane struct {
	Flavour    Flavour
	Kubeconfig string
	Config     *rest.Config
	// EtcdEndpoint is etcd's client URL.
	EtcdEndpoint string
	// PIDs of each component by name: etcd, apiserver, controller-manager,
	// scheduler.
	PIDs map[string]int

	dir   string
	procs map[string]*testcluster.Process // the ones start ran
	log   *testcluster.TailBuffer
	stops []func() error // run in reverse order by Close
}

// Components lists the names PIDs uses, in the order figures print.
var Components = []string{"etcd", "apiserver", "controller-manager", "scheduler"}

// LogTail returns the last n lines of every component's combined output.
func (c *ControlPlane) LogTail(n int) string { return testcluster.Tail(c.log.String(), n) }

// Close stops every process by PID, newest first, and removes the state
// directory.
func (c *ControlPlane) Close() error {
	var errs []error
	for i := len(c.stops) - 1; i >= 0; i-- {
		errs = append(errs, c.stops[i]())
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// StartControlPlane brings up the flavour's control plane with s. upstreamDir
// holds kube-apiserver, kube-controller-manager and kube-scheduler for
// Upstream. On error nothing is left running.
func StartControlPlane(ctx context.Context, f Flavour, s Settings, upstreamDir string) (*ControlPlane, error) {
	dir, err := os.MkdirTemp("", "trireme-scale-")
	if err != nil {
		return nil, fmt.Errorf("make state directory: %w", err)
	}
	c := &ControlPlane{Flavour: f, dir: dir, log: testcluster.NewTailBuffer(1 << 20), PIDs: map[string]int{}, procs: map[string]*testcluster.Process{}}
	for k, v := range map[string]string{"GOGC": s.GOGC, "GOMEMLIMIT": s.GOMEMLIMIT} {
		if v != "" {
			// Components inherit the harness's environment.
			if err := os.Setenv(k, v); err != nil {
				return nil, fmt.Errorf("set %s: %w", k, err)
			}
		}
	}
	switch f {
	case Trireme:
		err = c.startTrireme(ctx, s)
	case Upstream:
		err = c.startUpstream(ctx, s, upstreamDir)
	default:
		err = fmt.Errorf("unknown control plane %q (want %s or %s)", f, Trireme, Upstream)
	}
	if err != nil {
		logs := c.LogTail(80)
		return nil, errors.Join(fmt.Errorf("start %s control plane: %w\nlog (last lines):\n%s", f, err, logs), c.Close())
	}
	return c, nil
}

func (c *ControlPlane) startTrireme(ctx context.Context, s Settings) error {
	api, err := testcluster.LaunchAPIServer(ctx, testcluster.APIServerOptions{
		ExternalEtcd:          true,
		ServiceClusterIPRange: "10.96.0.0/16",
		ControllerManager:     true,
		ControllerManagerArgs: []string{
			"--kube-api-qps", fmt.Sprint(s.QPS), "--kube-api-burst", fmt.Sprint(s.Burst),
			"--node-monitor-grace-period", s.NodeMonitorGracePeriod.String(),
		},
	})
	if err != nil {
		return err
	}
	c.stops = append(c.stops, func() error {
		if err := api.Close(); err != nil {
			return err
		}
		return nil
	})
	c.Kubeconfig, c.Config, c.EtcdEndpoint = api.KubeconfigPath(), api.Config(), api.EtcdEndpoint()
	c.PIDs["etcd"], c.PIDs["apiserver"], c.PIDs["controller-manager"] = api.EtcdPID(), api.PID(), api.ControllerManagerPID()
	bin, err := testcluster.Binary("trireme-scheduler")
	if err != nil {
		return err
	}
	return c.startScheduler(bin, s)
}

// startScheduler runs the scheduler binary with a KubeSchedulerConfiguration
// (upstream's kind, which both read) holding s.
func (c *ControlPlane) startScheduler(bin string, s Settings) error {
	cfg := filepath.Join(c.dir, "scheduler.yaml")
	text := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: %g
  burst: %d
leaderElection:
  leaderElect: false
percentageOfNodesToScore: %d
`, c.Kubeconfig, s.QPS, s.Burst, s.PercentageOfNodesToScore)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write scheduler configuration: %w", err)
	}
	return c.start("scheduler", bin, "--config", cfg, "--secure-port=0")
}

// start runs one component and registers its stop.
func (c *ControlPlane) start(name, bin string, args ...string) error {
	fmt.Fprintf(c.log, "=== start %s %s\n", bin, strings.Join(args, " "))
	p, err := testcluster.StartProcess(bin, args, c.log)
	if err != nil {
		return err
	}
	c.PIDs[name] = p.PID()
	c.procs[name] = p
	c.stops = append(c.stops, func() error {
		select {
		case <-p.Exited():
			return fmt.Errorf("%s (pid %d) exited on its own: %v", name, p.PID(), p.ExitError())
		default:
		}
		return p.Stop(testcluster.DefaultStopTimeout)
	})
	return nil
}

// startUpstream runs upstream's components as kubeadm configures them, on
// an etcd of the same build as Trireme's.
func (c *ControlPlane) startUpstream(ctx context.Context, s Settings, bins string) error {
	for _, b := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(bins, b)); err != nil {
			return fmt.Errorf("%s: run hack/build-upstream.sh kube-apiserver kube-controller-manager kube-scheduler: %w", b, err)
		}
	}
	etcd, err := testcluster.StartEtcd(ctx, c.dir, c.log)
	if err != nil {
		return err
	}
	c.stops = append(c.stops, etcd.Stop)
	c.EtcdEndpoint, c.PIDs["etcd"] = etcd.Endpoint(), etcd.PID()

	pki := filepath.Join(c.dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return fmt.Errorf("make pki directory: %w", err)
	}
	ca := testpki.NewCA("scale-ca")
	caCert, caKey, err := ca.Write(pki, "ca")
	if err != nil {
		return err
	}
	serving, servingKey, err := ca.Issue(testpki.Cert{CommonName: "kube-apiserver", Usage: testpki.ServerAuth,
		IPs: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}).Write(pki, "apiserver")
	if err != nil {
		return err
	}
	admin := ca.Issue(testpki.Cert{CommonName: "scale-admin", Organization: []string{"system:masters"}, Usage: testpki.ClientAuth})
	adminCert, adminKey, err := admin.Write(pki, "admin")
	if err != nil {
		return err
	}
	// A serving pair's key doubles as the service-account signing key.
	_, saKey, err := ca.Issue(testpki.Cert{CommonName: "service-accounts", Usage: testpki.ServerAuth}).Write(pki, "sa")
	if err != nil {
		return err
	}
	port, err := freeport.Get()
	if err != nil {
		return err
	}
	if err := c.start("apiserver", filepath.Join(bins, "kube-apiserver"),
		"--etcd-servers", c.EtcdEndpoint, "--etcd-prefix", testcluster.StoragePrefix,
		"--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		// Upstream refuses a loopback address in the kubernetes Service's
		// endpoints; nothing here needs them.
		"--endpoint-reconciler-type", "none",
		"--tls-cert-file", serving, "--tls-private-key-file", servingKey, "--client-ca-file", caCert,
		"--service-account-key-file", saKey, "--service-account-signing-key-file", saKey,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-cluster-ip-range", "10.96.0.0/16", "--authorization-mode", "Node,RBAC",
		"--enable-admission-plugins", "NodeRestriction", "--enable-bootstrap-token-auth=true"); err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(c.dir, "admin.kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["scale"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + strconv.Itoa(port), CertificateAuthority: caCert}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: adminCert, ClientKey: adminKey}
	kc.Contexts["scale"] = &clientcmdapi.Context{Cluster: "scale", AuthInfo: "admin"}
	kc.CurrentContext = "scale"
	if err := clientcmd.WriteToFile(*kc, c.Kubeconfig); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	if err := waitReadyz(ctx, c.Config, testcluster.DefaultReadyTimeout, c.procs["apiserver"].Exited()); err != nil {
		return err
	}
	if err := c.start("controller-manager", filepath.Join(bins, "kube-controller-manager"),
		"--kubeconfig", c.Kubeconfig, "--secure-port=0", "--leader-elect=false", "--use-service-account-credentials",
		"--service-account-private-key-file", saKey, "--root-ca-file", caCert,
		"--cluster-signing-cert-file", caCert, "--cluster-signing-key-file", caKey,
		"--kube-api-qps", fmt.Sprint(s.QPS), "--kube-api-burst", fmt.Sprint(s.Burst),
		"--node-monitor-grace-period", s.NodeMonitorGracePeriod.String()); err != nil {
		return err
	}
	return c.startScheduler(filepath.Join(bins, "kube-scheduler"), s)
}

// waitReadyz polls the apiserver's /readyz until it answers ok, or exited
// is closed.
func waitReadyz(ctx context.Context, cfg *rest.Config, timeout time.Duration, exited <-chan struct{}) error {
	rc, err := restClient(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		body, err := rc.Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = err
		select {
		case <-exited:
			return fmt.Errorf("apiserver exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("apiserver not ready after %s: %v", timeout, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
