package app_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/adm/internal/copycerts"
	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/staticpod"
	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
)

var triremeadm string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipped with -short: the command's tests build triremeadm and run its phases")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "triremeadm-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	triremeadm, err = buildTriremeadm(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildTriremeadm compiles triremeadm into dir and returns its path: the
// phases under test are the command's, at this commit.
func buildTriremeadm(dir string) (string, error) {
	out := filepath.Join(dir, "triremeadm")
	cmd := exec.Command("go", "build", "-o", out, "trireme.dev/adm/cmd/triremeadm")
	cmd.Dir = testcluster.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build triremeadm: %w: %s", err, b)
	}
	return out, nil
}

// adm runs triremeadm with args and returns its output, failing the test on error.
func adm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(triremeadm, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("triremeadm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestInitPhasesRunControlPlane writes the certificates, kubeconfigs and manifests
// with the real binary into a temporary root, checks the certificates, then runs etcd
// and the apiserver from the manifests' commands (there is no kubelet yet) and uses
// the cluster through admin.conf, including the phases that need an apiserver.
func TestInitPhasesRunControlPlane(t *testing.T) {
	etcdBin, err := testcluster.Binary(testcluster.EtcdBinary)
	if err != nil {
		t.Fatal(err)
	}
	apiserverBin, err := testcluster.Binary(testcluster.APIServerBinary)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	apiPort, clientPort, peerPort, metricsPort := freeport.For(t), freeport.For(t), freeport.For(t), freeport.For(t)
	clientURL := fmt.Sprintf("https://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("https://127.0.0.1:%d", peerPort)
	// Ports and addresses a test must not share with the machine's own cluster go
	// through extraArgs, as a user's file would set them.
	config := fmt.Sprintf(`apiVersion: triremeadm.config.trireme.dev/v1alpha1
kind: ClusterConfiguration
etcd:
  local:
    extraArgs:
    - {name: listen-client-urls, value: %[1]q}
    - {name: advertise-client-urls, value: %[1]q}
    - {name: listen-peer-urls, value: %[2]q}
    - {name: initial-advertise-peer-urls, value: %[2]q}
    - {name: initial-cluster, value: "adm-it=%[2]s"}
    - {name: listen-metrics-urls, value: "http://127.0.0.1:%[3]d"}
apiServer:
  extraArgs:
  - {name: etcd-servers, value: %[1]q}
  - {name: bind-address, value: 127.0.0.1}
`, clientURL, peerURL, metricsPort)
	configFile := filepath.Join(root, "triremeadm.yaml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"--root-dir", root, "--config", configFile, "--node-name", "adm-it",
		"--apiserver-advertise-address", "127.0.0.1", "--apiserver-bind-port", strconv.Itoa(apiPort),
		"--control-plane-endpoint", "localhost", "--apiserver-cert-extra-sans", "adm-extra.example,10.1.2.3"}
	for _, phase := range []string{"certs", "kubeconfig", "etcd", "control-plane"} {
		out := adm(t, append([]string{"init", "phase", phase}, common...)...)
		if !strings.Contains(out, "["+phase+"]") || !strings.Contains(out, "... ok") {
			t.Errorf("phase %s printed %q", phase, out)
		}
	}
	// Running certs again reuses everything.
	if out := adm(t, append([]string{"init", "phase", "certs"}, common...)...); strings.Contains(out, "generated") {
		t.Errorf("second certs run regenerated something:\n%s", out)
	}
	pkiDir := filepath.Join(root, "etc/trireme/pki")
	checkCertificates(t, pkiDir)

	etcdPod, err := staticpod.Read(filepath.Join(root, "etc/trireme/manifests/etcd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	apiPod, err := staticpod.Read(filepath.Join(root, "etc/trireme/manifests/kube-apiserver.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	logs := testcluster.NewTailBuffer(256 << 10)
	defer func() {
		if t.Failed() {
			t.Logf("process output:\n%s", testcluster.Tail(logs.String(), 60))
		}
	}()
	start := func(binary string, args []string) *testcluster.Process {
		t.Helper()
		p, err := testcluster.StartProcess(binary, args, logs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := p.Stop(10 * time.Second); err != nil {
				t.Logf("stop %s: %v", filepath.Base(binary), err)
			}
		})
		return p
	}
	start(etcdBin, etcdPod.Spec.Containers[0].Command[1:])
	apiserver := start(apiserverBin, apiPod.Spec.Containers[0].Command[1:])

	ca, err := pki.Load(pkiDir, pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	waitLivez(t, fmt.Sprintf("https://127.0.0.1:%d/livez", apiPort), ca.Cert, apiserver.Exited())

	admin := filepath.Join(root, "etc/trireme/admin.conf")
	who, err := exec.Command("kubectl", "--kubeconfig", admin, "auth", "whoami").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl auth whoami: %v\n%s", err, who)
	}
	if !strings.Contains(string(who), "kubernetes-admin") || !strings.Contains(string(who), "kubeadm:cluster-admins") {
		t.Errorf("whoami = %s", who)
	}

	// The phases that need an apiserver, against this one.
	for _, phase := range []string{"upload-config", "bootstrap-token"} {
		adm(t, append([]string{"init", "phase", phase}, common...)...)
	}
	// admin.conf's group is now bound to cluster-admin.
	if out, err := exec.Command("kubectl", "--kubeconfig", admin, "get", "configmap", "-n", "kube-system", "triremeadm-config", "-o", "jsonpath={.data.ClusterConfiguration}").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "kind: ClusterConfiguration") {
		t.Errorf("uploaded config: %v\n%s", err, out)
	}
	// Anyone may read cluster-info, as joining nodes do before they have credentials.
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool(ca.Cert)}}}
	resp, err := anon.Get(fmt.Sprintf("https://127.0.0.1:%d/api/v1/namespaces/kube-public/configmaps/cluster-info", apiPort))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("anonymous GET cluster-info: %s", resp.Status)
	}

	// upload-certs stores the shared certificates encrypted with the given key,
	// owned by a token of its own, and readable by the joining nodes' tokens.
	key := strings.TrimSpace(adm(t, "certs", "certificate-key"))
	up := adm(t, append([]string{"init", "phase", "upload-certs", "--upload-certs", "--certificate-key", key}, common...)...)
	if !strings.Contains(up, key) {
		t.Errorf("upload-certs did not print the key:\n%s", up)
	}
	certs, err := clientset(t, admin).CoreV1().Secrets("kube-system").Get(context.Background(), copycerts.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(certs.OwnerReferences) != 1 || len(certs.Data) != len(copycerts.Files(false)) {
		t.Errorf("kubeadm-certs: owners %v, %d keys", certs.OwnerReferences, len(certs.Data))
	}
	if plain, err := copycerts.Decrypt(certs.Data["ca.key"], key); err != nil || !strings.Contains(string(plain), "PRIVATE KEY") {
		t.Errorf("decrypt ca.key: %v", err)
	}

	tokens := adm(t, "token", "list", "--root-dir", root)
	if strings.Count(tokens, "system:bootstrappers:kubeadm:default-node-token") != 1 {
		t.Errorf("token list after init:\n%s", tokens)
	}
	created := strings.TrimSpace(adm(t, "token", "create", "abcdef.0123456789abcdef", "--ttl", "1h", "--description", "it", "--root-dir", root))
	if created != "abcdef.0123456789abcdef" || !strings.Contains(adm(t, "token", "list", "--root-dir", root), "abcdef.0123456789abcdef") {
		t.Errorf("token create printed %q", created)
	}
	adm(t, "token", "delete", "abcdef", "--root-dir", root)
	if strings.Contains(adm(t, "token", "list", "--root-dir", root), "abcdef.") {
		t.Errorf("token abcdef still listed after delete")
	}

	// mark-control-plane labels and taints the node once it is registered; the test
	// registers it as a kubelet would.
	client := clientset(t, admin)
	if _, err := client.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "adm-it"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	adm(t, append([]string{"init", "phase", "mark-control-plane"}, common...)...)
	node, err := client.CoreV1().Nodes().Get(context.Background(), "adm-it", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tainted := slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
		return t.Key == "node-role.kubernetes.io/control-plane" && t.Effect == corev1.TaintEffectNoSchedule
	})
	if _, ok := node.Labels["node-role.kubernetes.io/control-plane"]; !ok || !tainted {
		t.Errorf("node after mark-control-plane: labels %v taints %v", node.Labels, node.Spec.Taints)
	}

	exp := adm(t, "certs", "check-expiration", "--root-dir", root)
	for _, want := range []string{"apiserver ", "etcd/peer", "admin.conf", "kubelet.conf", "front-proxy-ca", "364d", "9y"} {
		if !strings.Contains(exp, want) {
			t.Errorf("check-expiration lacks %q:\n%s", want, exp)
		}
	}
}

func checkCertificates(t *testing.T, dir string) {
	t.Helper()
	load := func(name string) *x509.Certificate {
		kp, err := pki.Load(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		return kp.Cert
	}
	ca, etcdCA, fpCA := load("ca"), load("etcd/ca"), load("front-proxy-ca")
	for _, c := range []*x509.Certificate{ca, etcdCA, fpCA} {
		if !c.IsCA || c.KeyUsage&x509.KeyUsageCertSign == 0 {
			t.Errorf("%s is not a signing CA", c.Subject.CommonName)
		}
	}
	server, client := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth
	tests := []struct {
		name   string
		ca     *x509.Certificate
		usages []x509.ExtKeyUsage
		cn     string
		org    []string
	}{
		{"apiserver", ca, []x509.ExtKeyUsage{server}, "kube-apiserver", nil},
		{"apiserver-kubelet-client", ca, []x509.ExtKeyUsage{client}, "kube-apiserver-kubelet-client", []string{"kubeadm:cluster-admins"}},
		{"front-proxy-client", fpCA, []x509.ExtKeyUsage{client}, "front-proxy-client", nil},
		{"etcd/server", etcdCA, []x509.ExtKeyUsage{server, client}, "adm-it", nil},
		{"etcd/peer", etcdCA, []x509.ExtKeyUsage{server, client}, "adm-it", nil},
		{"etcd/healthcheck-client", etcdCA, []x509.ExtKeyUsage{client}, "kube-etcd-healthcheck-client", nil},
		{"apiserver-etcd-client", etcdCA, []x509.ExtKeyUsage{client}, "kube-apiserver-etcd-client", nil},
	}
	for _, tt := range tests {
		c := load(tt.name)
		for _, u := range tt.usages {
			if _, err := c.Verify(x509.VerifyOptions{Roots: pool(tt.ca), KeyUsages: []x509.ExtKeyUsage{u}}); err != nil {
				t.Errorf("%s does not chain to %s for usage %v: %v", tt.name, tt.ca.Subject.CommonName, u, err)
			}
		}
		if !slices.Equal(c.ExtKeyUsage, tt.usages) || c.Subject.CommonName != tt.cn || !slices.Equal(c.Subject.Organization, tt.org) {
			t.Errorf("%s: usages %v CN %q O %v, want %v %q %v", tt.name, c.ExtKeyUsage, c.Subject.CommonName, c.Subject.Organization, tt.usages, tt.cn, tt.org)
		}
	}
	api := load("apiserver")
	for _, name := range []string{"adm-it", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost", "adm-extra.example"} {
		if err := api.VerifyHostname(name); err != nil {
			t.Errorf("apiserver certificate: %v", err)
		}
	}
	for _, ip := range []string{"127.0.0.1", "10.96.0.1", "10.1.2.3"} {
		if err := api.VerifyHostname(ip); err != nil {
			t.Errorf("apiserver certificate: %v", err)
		}
	}
	if err := load("etcd/server").VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("etcd server certificate: %v", err)
	}
	for _, f := range []string{"sa.key", "sa.pub"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "ca.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("ca.key mode: %v %v", st.Mode(), err)
	}
}

func waitLivez(t *testing.T, url string, ca *x509.Certificate, exited <-chan struct{}) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool(ca)}}}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatal("apiserver exited before becoming live")
		default:
		}
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s not live after 90s", url)
}

func pool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

func clientset(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(rc)
}
