package dashboard_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/console"
)

// startDashboard runs the built binary against srv and returns its URL.
func startDashboard(t *testing.T) string {
	t.Helper()
	bin, err := testcluster.Binary("trireme-dashboard")
	if err != nil {
		t.Fatal(err)
	}
	port := freeport.For(t)
	var out bytes.Buffer
	p, err := testcluster.StartProcess(bin, []string{"--kubeconfig", srv.KubeconfigPath(), "--secure-port", fmt.Sprint(port), "--bind-address", "127.0.0.1"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("trireme-dashboard log:\n%s", out.String())
		}
	})
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if r, err := c.Get(base + "/readyz"); err == nil {
			_ = r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("trireme-dashboard not ready after 30s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// userToken makes a ServiceAccount bound to clusterRole and returns a
// token for it, as `kubectl create token` would.
func userToken(t *testing.T, cs kubernetes.Interface, ns, name, clusterRole string) string {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func TestConsole(t *testing.T) {
	cs, err := kubernetes.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := "dash"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"note": "<script>alert(1)</script>"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/web:1"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	admin := userToken(t, cs, ns, "admin", "cluster-admin")
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "dash-read"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "apps"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	viewer := userToken(t, cs, ns, "viewer", "dash-read")
	base := startDashboard(t)
	deploy := "/apis/apps/v1/namespaces/" + ns + "/deployments/web"

	t.Run("wrong token is refused with the reason", func(t *testing.T) {
		b := console.Open(t, base)
		if r := b.SignIn("not-a-token"); r.Code != http.StatusUnauthorized || !strings.Contains(r.Body, "Unauthorized") {
			t.Fatalf("= %d %s", r.Code, r.Body)
		}
		if r := b.Do("GET", "/api/k8s/api/v1/pods", "", nil); r.Code != http.StatusUnauthorized {
			t.Fatalf("list without a session = %d", r.Code)
		}
	})

	b := console.Open(t, base)
	if r := b.SignIn(admin); r.Code != http.StatusOK || !strings.Contains(r.Body, "system:serviceaccount:dash:admin") {
		t.Fatalf("sign in = %d %s", r.Code, r.Body)
	}

	t.Run("lists are server-side tables as the user", func(t *testing.T) {
		r := b.Do("GET", "/api/k8s/apis/apps/v1/namespaces/"+ns+"/deployments?as=table&includeObject=Metadata&limit=10", "", nil)
		if r.Code != 200 || !strings.Contains(r.Body, `"kind":"Table"`) || !strings.Contains(r.Body, "Ready") {
			t.Fatalf("= %d %s", r.Code, r.Body)
		}
		// The annotation (labels cannot hold markup) is data, relayed as JSON text: the page sets it with
		// textContent.
		if !strings.Contains(r.Body, `\u003cscript\u003e`) && !strings.Contains(r.Body, "<script>") {
			t.Fatalf("annotation missing: %s", r.Body)
		}
	})

	t.Run("scale shows in a live watch", func(t *testing.T) {
		list := b.Do("GET", "/api/k8s"+deploy, "", nil)
		var d appsv1.Deployment
		if err := json.Unmarshal([]byte(list.Body), &d); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		resp, err := b.Stream(wctx, "/api/watch/apis/apps/v1/namespaces/"+ns+"/deployments?resourceVersion="+d.ResourceVersion)
		if err != nil {
			t.Fatal(err)
		}
		// The stream is cancelled before its body is closed: a Close
		// alone would wait for the server to end it.
		defer func() { cancel(); _ = resp.Body.Close() }()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("watch content type %q", ct)
		}
		start := time.Now()
		if r := b.Post("/api/action/scale", map[string]any{"path": deploy, "replicas": 3}); r.Code != 200 {
			t.Fatalf("scale = %d %s", r.Code, r.Body)
		}
		buf := make([]byte, 64<<10)
		var got string
		for !strings.Contains(got, `"replicas":3`) {
			n, err := resp.Body.Read(buf)
			if err != nil {
				t.Fatalf("watch ended before the change: %v (%s)", err, got)
			}
			got += string(buf[:n])
		}
		if !strings.HasPrefix(got, "data: ") {
			t.Fatalf("not server-sent events: %q", got[:min(80, len(got))])
		}
		t.Logf("scale to watch event: %v", time.Since(start))
	})

	t.Run("restart sets restartedAt", func(t *testing.T) {
		if r := b.Post("/api/action/restart", map[string]any{"path": deploy}); r.Code != 200 {
			t.Fatalf("= %d %s", r.Code, r.Body)
		}
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
			t.Fatalf("no restartedAt: %v %v", d.Spec.Template.Annotations, err)
		}
	})

	t.Run("an edit the API refuses shows the field path and changes nothing", func(t *testing.T) {
		bad := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"dash"},"spec":{"replicas":-5}}`
		r := b.Post("/api/action/apply", map[string]any{"path": deploy, "body": bad, "dryRun": true})
		if r.Code != http.StatusUnprocessableEntity || !strings.Contains(r.Body, `"field":"spec.replicas"`) {
			t.Fatalf("= %d %s", r.Code, r.Body)
		}
		good := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"dash"},"spec":{"replicas":2}}`
		if r := b.Post("/api/action/apply", map[string]any{"path": deploy, "body": good, "dryRun": true}); r.Code != 200 || !strings.Contains(r.Body, `"replicas":2`) {
			t.Fatalf("dry run = %d %s", r.Code, r.Body)
		}
		d, _ := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if *d.Spec.Replicas != 3 {
			t.Fatalf("a dry run changed replicas to %d", *d.Spec.Replicas)
		}
	})

	t.Run("cross-site POST without the CSRF token is refused", func(t *testing.T) {
		r := b.Do("POST", "/api/action/delete", `{"path":"`+deploy+`"}`, map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"})
		if r.Code != http.StatusForbidden {
			t.Fatalf("= %d %s", r.Code, r.Body)
		}
		r = b.Do("POST", "/api/action/delete", `{"path":"`+deploy+`"}`, map[string]string{"Content-Type": "application/json"})
		if r.Code != http.StatusForbidden || !strings.Contains(r.Body, "CSRF") {
			t.Fatalf("= %d %s", r.Code, r.Body)
		}
	})

	t.Run("a read-only user is not offered delete and is refused it", func(t *testing.T) {
		v := console.Open(t, base)
		if r := v.SignIn(viewer); r.Code != 200 {
			t.Fatalf("sign in = %d %s", r.Code, r.Body)
		}
		r := v.Post("/api/can-i", []map[string]string{
			{"verb": "delete", "group": "apps", "resource": "deployments", "namespace": ns, "name": "web"},
			{"verb": "list", "group": "apps", "resource": "deployments", "namespace": ns},
		})
		var answers []struct {
			Allowed bool   `json:"allowed"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(r.Body), &answers); err != nil || len(answers) != 2 {
			t.Fatalf("can-i = %d %s", r.Code, r.Body)
		}
		if answers[0].Allowed || answers[0].Reason == "" || !answers[1].Allowed {
			t.Fatalf("can-i answers %+v", answers)
		}
		r = v.Post("/api/action/delete", map[string]any{"path": deploy})
		if r.Code != http.StatusForbidden || !strings.Contains(r.Body, `"reason":"Forbidden"`) {
			t.Fatalf("delete as viewer = %d %s", r.Code, r.Body)
		}
	})

	t.Run("sign out ends the session", func(t *testing.T) {
		if r := b.Do("POST", "/logout", "", map[string]string{"X-CSRF-Token": b.CSRF}); r.Code != http.StatusNoContent {
			t.Fatalf("= %d", r.Code)
		}
		if r := b.Do("GET", "/api/session", "", nil); r.Code != http.StatusUnauthorized {
			t.Fatalf("after sign-out = %d", r.Code)
		}
	})
}
