package kubelet_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testpki"
	"trireme.dev/e2e/framework"
)

// suite is what every test shares: starting containerd, the apiserver
// and a kubelet per test would make the suite several times slower.
var suite struct {
	srv        *testcluster.APIServer
	containerd *framework.Containerd
	kubelet    *testcluster.Process
	kubeletLog *testcluster.LogBuffer
	client     kubernetes.Interface
	nodeName   string
	podCIDR    string
	busybox    string
	dir        string
	args       []string
	// kubeconfig is the file the kubelet writes after TLS bootstrap with
	// the token bootstrapToken.
	kubeconfig     string
	bootstrapToken string
	// port is the kubelet's node server port; apiClient and userClient
	// are the certificate and key files of the apiserver's kubelet client
	// and of a user with no rights, both trusted by the kubelet.
	port                  int
	apiClient, userClient [2]string
}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) (code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cleanup, err := setUp(ctx)
	defer func() {
		if cerr := cleanup(); cerr != nil {
			fmt.Fprintf(os.Stderr, "e2e/kubelet: clean up: %v\n", cerr)
			code = max(code, 1)
		}
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/kubelet: %v\n", err)
		return 1
	}
	code = m.Run()
	if path := os.Getenv("KUBELET_E2E_LOG"); path != "" {
		_ = os.WriteFile(path, []byte(suite.kubeletLog.String()), 0o644)
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-kubelet log (last lines):\n%s\n", suite.kubeletLog.Tail(150))
		fmt.Fprintf(os.Stderr, "containerd log (last lines):\n%s\n", suite.containerd.LogTail(40))
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", suite.srv.LogTail(60))
	}
	return code
}

// setUp starts everything; the returned cleanup stops what was started,
// by PID, whether or not setUp succeeded.
func setUp(ctx context.Context) (func() error, error) {
	var closers []func() error
	cleanup := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	dir, err := os.MkdirTemp("/var/tmp", "trireme-e2e-kubelet-")
	if err != nil {
		return cleanup, err
	}
	suite.dir = dir
	closers = append(closers, func() error { return os.RemoveAll(dir) })

	// The apiserver reaches kubelets with a client certificate the
	// kubelet trusts through --client-ca-file.
	kubeletClientCA := testpki.NewCA("kubelet-client-ca")
	clientCAFile, _, err := kubeletClientCA.Write(dir, "kubelet-client-ca")
	if err != nil {
		return cleanup, err
	}
	apiCert, apiKey, err := kubeletClientCA.Issue(testpki.Cert{
		CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}, Usage: testpki.ClientAuth,
	}).Write(dir, "apiserver-kubelet-client")
	if err != nil {
		return cleanup, err
	}
	srv, err := testcluster.LaunchAPIServer(ctx, testcluster.APIServerOptions{
		ControllerManager: true,
		// Certificates short-lived enough that the kubelet renews both of
		// its own during the suite (TestCertificateRotation).
		ControllerManagerArgs: []string{"--cluster-signing-duration=" + certificateLifetime.String()},
		ExtraArgs:             []string{"--kubelet-client-certificate", apiCert, "--kubelet-client-key", apiKey, "--enable-bootstrap-token-auth"},
	})
	if err != nil {
		return cleanup, err
	}
	suite.srv = srv
	closers = append(closers, srv.Close)
	restConfig := srv.Config()
	suite.client, err = kubernetes.NewForConfig(restConfig)
	if err != nil {
		return cleanup, err
	}

	// The kubelet keeps its pods' cgroups under a root of the suite's own,
	// removed once the kubelet and containerd have stopped.
	suite.nodeName = "trireme-e2e-kubelet-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 36)
	closers = append(closers, func() error { return framework.RemoveCgroupTree(suite.nodeName) })
	cd, err := framework.StartContainerd(ctx, framework.ContainerdOptions{})
	if err != nil {
		return cleanup, err
	}
	suite.containerd = cd
	closers = append(closers, cd.Close)
	suite.busybox = cd.Images["busybox.tar"]

	// The kubelet joins as kubeadm's nodes do: a bootstrap token buys its
	// client certificate (system:node:<name> in system:nodes, so the Node
	// authorizer and NodeRestriction apply) through a CSR the
	// controller-manager approves and signs, and its serving certificate
	// comes from a kubelet-serving CSR.
	bootstrapKubeconfig, err := setUpBootstrapToken(ctx, dir, restConfig.Host, srv.CACertPath())
	if err != nil {
		return cleanup, err
	}
	suite.kubeconfig = filepath.Join(dir, "kubelet.kubeconfig")
	kubeletConfig := filepath.Join(dir, "kubelet-config.yaml")
	if err := os.WriteFile(kubeletConfig, []byte(kubeletConfigYAML+"cgroupRoot: /"+suite.nodeName+"\n"), 0o644); err != nil {
		return cleanup, err
	}
	port, err := freeport.Get()
	if err != nil {
		return cleanup, err
	}
	suite.port = port
	suite.apiClient = [2]string{apiCert, apiKey}
	userCert, userKey, err := kubeletClientCA.Issue(testpki.Cert{CommonName: "e2e-nobody", Usage: testpki.ClientAuth}).Write(dir, "nobody")
	if err != nil {
		return cleanup, err
	}
	suite.userClient = [2]string{userCert, userKey}
	suite.args = []string{
		"--config", kubeletConfig,
		"--kubeconfig", suite.kubeconfig,
		"--bootstrap-kubeconfig", bootstrapKubeconfig,
		"--container-runtime-endpoint", cd.Endpoint(),
		"--hostname-override", suite.nodeName,
		"--node-ip", "127.0.0.1",
		"--root-dir", filepath.Join(dir, "root"),
		"--pod-logs-dir", filepath.Join(dir, "pods-logs"),
		"--port", strconv.Itoa(port),
		"--healthz-port", "0",
		"--fail-cgroupv1=false",
		"--client-ca-file", clientCAFile,
		"--pod-manifest-path", filepath.Join(dir, "manifests"),
		"--file-check-frequency", "1s",
		"--node-labels", "e2e.trireme.dev/suite=kubelet",
		"-v", cmp.Or(os.Getenv("KUBELET_E2E_V"), "2"),
	}
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		return cleanup, err
	}
	suite.kubeletLog = &testcluster.LogBuffer{}
	if err := startKubelet(); err != nil {
		return cleanup, err
	}
	closers = append(closers, func() error { return stopKubelet() })

	// No node IPAM controller runs: the suite gives the node its pod CIDR,
	// which the kubelet hands to containerd.
	suite.podCIDR = fmt.Sprintf("10.244.%d.0/24", 100+rand.IntN(150))
	if err := waitFor(ctx, 60*time.Second, func() (bool, error) {
		if err := suite.kubelet.ExitError(); err != nil {
			return false, fmt.Errorf("kubelet exited: %w", err)
		}
		patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, suite.podCIDR, suite.podCIDR)
		_, err := suite.client.CoreV1().Nodes().Patch(ctx, suite.nodeName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err == nil, nil
	}); err != nil {
		return cleanup, fmt.Errorf("node never registered: %w\n%s", err, suite.kubeletLog.Tail(60))
	}
	if err := waitFor(ctx, 60*time.Second, func() (bool, error) {
		node, err := suite.client.CoreV1().Nodes().Get(ctx, suite.nodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return cleanup, fmt.Errorf("node never became Ready: %w\n%s", err, suite.kubeletLog.Tail(60))
	}
	// The node server has no certificate until its kubelet-serving CSR is
	// signed.
	if err := waitFor(ctx, 60*time.Second, func() (bool, error) {
		_, err := servingCertificate()
		return err == nil, nil
	}); err != nil {
		return cleanup, fmt.Errorf("node server never got its serving certificate: %w\n%s", err, suite.kubeletLog.Tail(60))
	}
	// ServiceAccount admission needs the default ServiceAccount.
	if err := waitFor(ctx, 60*time.Second, func() (bool, error) {
		_, err := suite.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return cleanup, fmt.Errorf("default ServiceAccount never appeared: %w", err)
	}
	return cleanup, nil
}

func startKubelet() error {
	bin, err := testcluster.Binary("trireme-kubelet")
	if err != nil {
		return err
	}
	fmt.Fprintf(suite.kubeletLog, "=== start %s %s\n", bin, strings.Join(suite.args, " "))
	suite.kubelet, err = testcluster.StartProcess(bin, suite.args, suite.kubeletLog)
	return err
}

func stopKubelet() error {
	if suite.kubelet == nil {
		return nil
	}
	err := suite.kubelet.Stop(20 * time.Second)
	suite.kubelet = nil
	return err
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
