package server

import (
	"bufio"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	encryptionconfigcontroller "k8s.io/apiserver/pkg/server/options/encryptionconfig/controller"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/keyutil"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testpki"
)

// testServer is one in-process apiserver shared by the security tests: it
// serves with encryption at rest, an audit log, a static token file and
// bootstrap tokens, as a hardened cluster would.
type testServer struct {
	dir, url, kubeconfig, auditLog string
	etcdURL                        string
	client                         *kubernetes.Clientset
	// key1 is the base64 AES key the encryption config starts with.
	key1 string
}

var shared *testServer

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipped with -short: the server's tests start an apiserver")
		os.Exit(0)
	}
	// The reload controller polls the encryption config once a minute; the
	// rotation test should not take minutes.
	encryptionconfigcontroller.EncryptionConfigFileChangePollDuration = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	s, stop, err := startServer(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start apiserver:", err)
		cancel()
		if stop != nil {
			stop()
		}
		os.Exit(1)
	}
	shared = s
	code := m.Run()
	cancel()
	stop()
	_ = os.RemoveAll(s.dir)
	os.Exit(code)
}

const encryptionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
%s  - identity: {}
- resources: [configmaps]
  providers:
  - kms:
      apiVersion: v2
      name: testkms
      endpoint: unix://%s
      timeout: 5s
  - identity: {}
`

// aescbcKey is one key of the aescbc provider: a name and a base64 secret.
type aescbcKey struct{ name, secret string }

// encryptionConfigFor renders encryptionConfig for the server in dir with
// the aescbc keys in order: the first encrypts, all decrypt.
func encryptionConfigFor(dir string, keys ...aescbcKey) string {
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "      - name: %s\n        secret: %s\n", k.name, k.secret)
	}
	return fmt.Sprintf(encryptionConfig, b.String(), filepath.Join(dir, "kms.sock"))
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

func startServer(ctx context.Context) (*testServer, func(), error) {
	dir, err := os.MkdirTemp("", "trireme-security-")
	if err != nil {
		return nil, nil, err
	}
	port, err := freeport.Get()
	if err != nil {
		return nil, nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, nil, err
	}
	files := map[string]string{
		"encryption.yaml": encryptionConfigFor(dir, aescbcKey{"key1", base64.StdEncoding.EncodeToString(key)}),
		"audit.yaml":      auditPolicy,
		"tokens.csv":      "static-token-1234,static-user,static-uid,\"group-a,group-b\"\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, nil, err
		}
	}
	stopKMS, err := startTestKMS(filepath.Join(dir, "kms.sock"))
	if err != nil {
		return nil, nil, err
	}
	s := &testServer{dir: dir, auditLog: filepath.Join(dir, "audit.log"), key1: base64.StdEncoding.EncodeToString(key)}
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{
		"--data-dir=" + filepath.Join(dir, "data"),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--encryption-provider-config=" + filepath.Join(dir, "encryption.yaml"),
		"--encryption-provider-config-automatic-reload",
		"--audit-policy-file=" + filepath.Join(dir, "audit.yaml"),
		"--audit-log-path=" + s.auditLog,
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--enable-bootstrap-token-auth",
		"--service-account-max-token-expiration=48h",
	}); err != nil {
		return nil, nil, err
	}
	srv, serverCleanup, err := New(ctx, o, zap.NewNop())
	cleanup := func() {
		serverCleanup()
		stopKMS()
	}
	if err != nil {
		return nil, cleanup, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	stop := func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
		cleanup()
	}
	s.etcdURL = o.Etcd.StorageConfig.Transport.ServerList[0]
	s.url = "https://127.0.0.1:" + strconv.Itoa(port)
	s.kubeconfig = filepath.Join(dir, "data", "admin.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", s.kubeconfig)
	if err != nil {
		return nil, stop, err
	}
	if s.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, stop, err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		body, err := s.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	})
	if err != nil {
		return nil, stop, fmt.Errorf("apiserver not ready: %w", err)
	}
	return s, stop, nil
}

// kubectl runs the machine's kubectl with the given kubeconfig (or, when
// empty, none: only the server and its CA) and returns its combined output.
func (s *testServer) kubectl(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	if kubeconfig == "" {
		kubeconfig = os.DevNull
		args = append([]string{"--server=" + s.url, "--certificate-authority=" + filepath.Join(s.dir, "data", "pki", "ca.crt")}, args...)
	}
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig=" + kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *testServer) ensureNamespaceWithSA(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := s.client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
}

func (s *testServer) review(t *testing.T, token string) authenticationv1.TokenReviewStatus {
	t.Helper()
	r, err := s.client.AuthenticationV1().TokenReviews().Create(context.Background(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenReview: %v", err)
	}
	return r.Status
}

func TestCreateTokenAuthenticatesAsServiceAccount(t *testing.T) {
	s := shared
	s.ensureNamespaceWithSA(t, "demo")
	out, err := s.kubectl(t, s.kubeconfig, "create", "token", "default", "-n", "demo", "--duration=10m")
	if err != nil {
		t.Fatalf("kubectl create token: %v\n%s", err, out)
	}
	token := strings.TrimSpace(out)

	st := s.review(t, token)
	if !st.Authenticated || st.User.Username != "system:serviceaccount:demo:default" {
		t.Fatalf("TokenReview status = %+v", st)
	}
	for _, g := range []string{"system:serviceaccounts", "system:serviceaccounts:demo", "system:authenticated"} {
		if !strings.Contains(strings.Join(st.User.Groups, ","), g) {
			t.Errorf("groups %v lack %s", st.User.Groups, g)
		}
	}

	// The default policy lets every authenticated user discover the API,
	// and nothing more: the token reaches /api but not the secrets.
	out, _ = s.kubectl(t, "", "--token="+token, "get", "--raw", "/api")
	if !strings.Contains(out, "APIVersions") {
		t.Errorf("service account token on /api: want the APIVersions, got %s", out)
	}
	out, _ = s.kubectl(t, "", "--token="+token, "get", "--raw", "/api/v1/namespaces/demo/secrets")
	if !strings.Contains(out, "Forbidden") {
		t.Errorf("service account token on secrets: want Forbidden, got %s", out)
	}

	// The token's lifetime is what was asked for.
	claims := decodeClaims(t, token)
	if life := claims["exp"].(float64) - claims["iat"].(float64); life != 600 {
		t.Errorf("token lifetime = %vs, want 600s", life)
	}
}

func TestWhoAmI(t *testing.T) {
	s := shared
	out, err := s.kubectl(t, s.kubeconfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	if err != nil {
		t.Fatalf("kubectl auth whoami: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "kubernetes-admin ") || !strings.Contains(out, "kubeadm:cluster-admins") || !strings.Contains(out, "system:authenticated") {
		t.Fatalf("whoami = %q", out)
	}
}

func TestTokenRequestLimits(t *testing.T) {
	s := shared
	s.ensureNamespaceWithSA(t, "demo")
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		seconds  int64
		wantErr  bool
		wantLife float64
	}{
		{name: "shorter than ten minutes is invalid", seconds: 60, wantErr: true},
		{name: "longer than the maximum is capped", seconds: 7 * 24 * 3600, wantLife: 48 * 3600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secs := tc.seconds
			tr, err := s.client.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			c := decodeClaims(t, tr.Status.Token)
			if life := c["exp"].(float64) - c["iat"].(float64); life != tc.wantLife {
				t.Errorf("lifetime = %v, want %v", life, tc.wantLife)
			}
		})
	}
	if _, err := s.client.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "missing", &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("token for a missing service account: err = %v, want not found", err)
	}
}

func TestBoundTokenDiesWithItsSecret(t *testing.T) {
	s := shared
	s.ensureNamespaceWithSA(t, "demo")
	ctx := context.Background()
	sec, err := s.client.CoreV1().Secrets("demo").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "binder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.client.CoreV1().ServiceAccounts("demo").CreateToken(ctx, "default", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "binder", UID: sec.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.review(t, tr.Status.Token); !st.Authenticated {
		t.Fatalf("bound token rejected while its secret lives: %s", st.Error)
	}
	if err := s.client.CoreV1().Secrets("demo").Delete(ctx, "binder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return !s.review(t, tr.Status.Token).Authenticated, nil
	})
	if err != nil {
		t.Fatal("bound token still accepted after its secret was deleted")
	}
}

func TestBadCredentialsAre401(t *testing.T) {
	s := shared
	s.ensureNamespaceWithSA(t, "demo")
	saKey, err := keyutil.PrivateKeyFromFile(filepath.Join(s.dir, "data", "pki", "sa.key"))
	if err != nil {
		t.Fatal(err)
	}
	sa, err := s.client.CoreV1().ServiceAccounts("demo").Get(context.Background(), "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expired := signToken(t, saKey.(crypto.Signer), sa, time.Now().Add(-2*time.Hour))
	valid := signToken(t, saKey.(crypto.Signer), sa, time.Now())
	if st := s.review(t, valid); !st.Authenticated {
		t.Fatalf("control token rejected: %s", st.Error)
	}
	parts := strings.Split(valid, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(mustDecode(t, parts[1]), "demo:default", "demo:admin00", 1))) + "." + parts[2]
	// A system:masters certificate from a CA named as the server's own.
	foreignCert, foreignKey, err := testpki.NewCA("trireme-ca").Issue(testpki.Cert{
		CommonName: "kubernetes-admin", Organization: []string{"system:masters"}, Usage: testpki.ClientAuth,
	}).Write(s.dir, "foreign")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"expired token", []string{"--token=" + expired}},
		{"tampered token", []string{"--token=" + tampered}},
		{"malformed token", []string{"--token=eyJhbGciOiJSUzI1NiJ9.not-json.%%%"}},
		{"unknown opaque token", []string{"--token=abcdef.0123456789abcdef"}},
		{"certificate from another CA", []string{"--client-certificate=" + foreignCert, "--client-key=" + foreignKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.kubectl(t, "", append(tc.args, "get", "--raw", "/api")...)
			if err == nil || !strings.Contains(out, "Unauthorized") {
				t.Fatalf("want 401 Unauthorized, got err=%v output=%s", err, out)
			}
		})
	}
	t.Run("anonymous request is forbidden, not unauthorized", func(t *testing.T) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // no credentials on purpose
		resp, err := c.Get(s.url + "/api")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("anonymous /api: %d, want 403", resp.StatusCode)
		}
	})
}

func TestStaticAndBootstrapTokens(t *testing.T) {
	s := shared
	ctx := context.Background()
	_, err := s.client.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef"},
		Type:       "bootstrap.kubernetes.io/token",
		StringData: map[string]string{
			"token-id": "abcdef", "token-secret": "0123456789abcdef",
			"usage-bootstrap-authentication": "true",
			"expiration":                     time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, token, user, group string }{
		{"static token file", "static-token-1234", "static-user", "group-b"},
		{"bootstrap token", "abcdef.0123456789abcdef", "system:bootstrap:abcdef", "system:bootstrappers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st authenticationv1.TokenReviewStatus
			// The bootstrap Secret reaches the informer asynchronously.
			_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				st = s.review(t, tc.token)
				return st.Authenticated, nil
			})
			if !st.Authenticated || st.User.Username != tc.user || !strings.Contains(strings.Join(st.User.Groups, ","), tc.group) {
				t.Fatalf("status = %+v", st)
			}
		})
	}
}

func TestSecretsAreEncryptedAtRest(t *testing.T) {
	s := shared
	s.ensureNamespaceWithSA(t, "demo")
	ctx := context.Background()
	if _, err := s.client.CoreV1().Secrets("demo").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "at-rest"}, StringData: map[string]string{"password": "hunter2-plaintext"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.client.CoreV1().Secrets("demo").Get(ctx, "at-rest", metav1.GetOptions{})
	if err != nil || string(got.Data["password"]) != "hunter2-plaintext" {
		t.Fatalf("read through the API: %v %q", err, got.Data["password"])
	}
	etcd := s.etcd(t)
	resp, err := etcd.Get(ctx, "/registry/secrets/demo/at-rest")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw etcd read: %v (%d keys)", err, len(resp.Kvs))
	}
	raw := resp.Kvs[0].Value
	if !strings.HasPrefix(string(raw), "k8s:enc:aescbc:v1:key1:") {
		t.Errorf("stored secret is not aescbc ciphertext: %q", raw[:min(len(raw), 40)])
	}
	if strings.Contains(string(raw), "hunter2-plaintext") {
		t.Error("plaintext found in etcd")
	}
	// Config maps go through the KMS v2 plugin.
	cm, err := etcd.Get(ctx, "/registry/configmaps/kube-system/extension-apiserver-authentication")
	if err != nil || len(cm.Kvs) != 1 || !strings.HasPrefix(string(cm.Kvs[0].Value), "k8s:enc:kms:v2:testkms:") {
		t.Errorf("configmap should be KMS v2 ciphertext: %v", err)
	}
	if _, err := s.client.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{}); err != nil {
		t.Errorf("KMS-encrypted configmap unreadable through the API: %v", err)
	}
	// Resources not named in the config stay as they were.
	sa, err := etcd.Get(ctx, "/registry/serviceaccounts/demo/default")
	if err != nil || len(sa.Kvs) != 1 || strings.HasPrefix(string(sa.Kvs[0].Value), "k8s:enc:") {
		t.Errorf("service account should be stored unencrypted: %v", err)
	}
}

// etcd returns a client of the server's etcd, closed when t ends.
func (s *testServer) etcd(t *testing.T) *clientv3.Client {
	t.Helper()
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{s.etcdURL}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Close() })
	return etcd
}

// storedSecretPrefix returns the first bytes of a secret as etcd holds it.
func storedSecretPrefix(t *testing.T, etcd *clientv3.Client, ns, name string) string {
	t.Helper()
	resp, err := etcd.Get(context.Background(), "/registry/secrets/"+ns+"/"+name)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw etcd read of secret %s/%s: %v", ns, name, err)
	}
	return string(resp.Kvs[0].Value[:min(len(resp.Kvs[0].Value), 40)])
}

// waitForWriteKey writes the encryption config of keys and waits until the
// server, reloading it, encrypts new secrets with the first key.
func (s *testServer) waitForWriteKey(t *testing.T, etcd *clientv3.Client, ns string, keys ...aescbcKey) {
	t.Helper()
	path := filepath.Join(s.dir, "encryption.yaml")
	if err := os.WriteFile(path, []byte(encryptionConfigFor(s.dir, keys...)), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "k8s:enc:aescbc:v1:" + keys[0].name + ":"
	ctx := context.Background()
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		probe, err := s.client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		defer func() { _ = s.client.CoreV1().Secrets(ns).Delete(ctx, probe.Name, metav1.DeleteOptions{}) }()
		last = storedSecretPrefix(t, etcd, ns, probe.Name)
		return strings.HasPrefix(last, want), nil
	})
	if err != nil {
		t.Fatalf("new secrets still stored as %q, want prefix %q after reloading the config: %v", last, want, err)
	}
}

func TestEncryptionKeyRotationByReload(t *testing.T) {
	s := shared
	s.ensureNamespaceWithSA(t, "rotate")
	ctx := context.Background()
	etcd := s.etcd(t)
	secrets := s.client.CoreV1().Secrets("rotate")
	if _, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "before"}, StringData: map[string]string{"k": "v1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := storedSecretPrefix(t, etcd, "rotate", "before"); !strings.HasPrefix(got, "k8s:enc:aescbc:v1:key1:") {
		t.Fatalf("secret before rotation stored as %q", got)
	}
	newKey := make([]byte, 32)
	if _, err := rand.Read(newKey); err != nil {
		t.Fatal(err)
	}
	key1, key2 := aescbcKey{"key1", s.key1}, aescbcKey{"key2", base64.StdEncoding.EncodeToString(newKey)}
	// Step 1 of a rotation: the new key first, the old one still decrypts.
	s.waitForWriteKey(t, etcd, "rotate", key2, key1)

	got, err := secrets.Get(ctx, "before", metav1.GetOptions{})
	if err != nil || string(got.Data["k"]) != "v1" {
		t.Fatalf("secret written under key1 unreadable after reload: %v %q", err, got.Data["k"])
	}
	// Step 2: rewriting a secret re-encrypts it with the new key.
	got.Labels = map[string]string{"rotated": "true"}
	if _, err := secrets.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := storedSecretPrefix(t, etcd, "rotate", "before"); !strings.HasPrefix(p, "k8s:enc:aescbc:v1:key2:") {
		t.Fatalf("rewritten secret stored as %q, want key2 ciphertext", p)
	}
	// Once every secret is rewritten, key1 can go: what key2 wrote stays readable.
	s.waitForWriteKey(t, etcd, "rotate", key2)
	if got, err := secrets.Get(ctx, "before", metav1.GetOptions{}); err != nil || string(got.Data["k"]) != "v1" {
		t.Fatalf("rotated secret unreadable with key2 alone: %v", err)
	}
	// Restoring key1 first, key2 after lets the rest of the suite and the
	// rotated secret both keep working.
	s.waitForWriteKey(t, etcd, "rotate", key1, key2)
}

func TestAuditLogHasJSONLines(t *testing.T) {
	s := shared
	if _, err := s.client.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		f, err := os.Open(s.auditLog)
		if err != nil {
			return false, nil
		}
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev struct {
				Kind, Level, Verb, RequestURI, Stage string
				User                                 struct{ Username string }
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				return false, fmt.Errorf("audit line is not JSON: %q", sc.Text())
			}
			if ev.Kind == "Event" && ev.Level == "Metadata" && ev.Verb == "get" && ev.RequestURI == "/api/v1/namespaces/kube-system" &&
				ev.Stage == "ResponseComplete" && ev.User.Username == "kubernetes-admin" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no audit event for the admin's GET: %v", err)
	}
}

func TestTLSPolicy(t *testing.T) {
	s := shared
	addr := strings.TrimPrefix(s.url, "https://")
	t.Run("TLS 1.1 is refused", func(t *testing.T) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}) //nolint:gosec // probing the server's minimum
		if err == nil {
			_ = c.Close()
			t.Fatal("server accepted TLS 1.1")
		}
	})
	t.Run("TLS 1.2 is accepted", func(t *testing.T) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}) //nolint:gosec // probing the server's minimum
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}

// TestServingCertificateReloads runs last among the TLS checks: it swaps the
// serving certificate files and expects the new one on new connections.
func TestServingCertificateReloads(t *testing.T) {
	s := shared
	addr := strings.TrimPrefix(s.url, "https://")
	pki := filepath.Join(s.dir, "data", "pki")
	ca, err := testpki.LoadCA(filepath.Join(pki, "ca.crt"), filepath.Join(pki, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	serving := ca.Issue(testpki.Cert{CommonName: "reloaded", IPs: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}, Usage: testpki.ServerAuth})
	if _, _, err := serving.Write(pki, "apiserver"); err != nil {
		t.Fatal(err)
	}
	serial := serving.Cert.SerialNumber
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // inspecting the served certificate
		if err != nil {
			return false, nil
		}
		defer func() { _ = c.Close() }()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(serial) == 0, nil
	})
	if err != nil {
		t.Fatal("the server still serves the old certificate")
	}
}

// signToken signs a service-account token for sa with our key, issued at
// issuedAt for one hour, the way the TokenRequest subresource would.
func signToken(t *testing.T, key crypto.Signer, sa *corev1.ServiceAccount, issuedAt time.Time) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{
		"iss": "https://kubernetes.default.svc.cluster.local",
		"sub": "system:serviceaccount:demo:default",
		"aud": []string{"https://kubernetes.default.svc.cluster.local"},
		"iat": jwt.NewNumericDate(issuedAt),
		"nbf": jwt.NewNumericDate(issuedAt),
		"exp": jwt.NewNumericDate(issuedAt.Add(time.Hour)),
		"kubernetes.io": map[string]any{
			"namespace":      "demo",
			"serviceaccount": map[string]string{"name": sa.Name, "uid": string(sa.UID)},
		},
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func mustDecode(t *testing.T, part string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	var c map[string]any
	if err := json.Unmarshal([]byte(mustDecode(t, parts[1])), &c); err != nil {
		t.Fatal(err)
	}
	return c
}
