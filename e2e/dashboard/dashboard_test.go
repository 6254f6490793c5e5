package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/e2e/internal/console"
)

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
	admin := console.Token(t, cs, ns, "admin", "cluster-admin")
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "dash-read"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "apps"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	viewer := console.Token(t, cs, ns, "viewer", "dash-read")
	base := console.Start(t, srv.KubeconfigPath())
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
