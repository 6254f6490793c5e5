package bootstrapsigner

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/cluster-bootstrap/token/jws"
)

const kubeconfig = "apiVersion: v1\nkind: Config\n"

func token(id, secret string, signing bool, expires time.Time) *corev1.Secret {
	data := map[string][]byte{"token-id": []byte(id), "token-secret": []byte(secret), "expiration": []byte(expires.Format(time.RFC3339))}
	if signing {
		data["usage-bootstrap-signing"] = []byte("true")
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: metav1.NamespaceSystem},
		Type: corev1.SecretTypeBootstrapToken, Data: data}
}

func TestSync(t *testing.T) {
	later, earlier := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)
	info := func(extra map[string]string) *corev1.ConfigMap {
		data := map[string]string{"kubeconfig": kubeconfig}
		for k, v := range extra {
			data[k] = v
		}
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster-info", Namespace: metav1.NamespacePublic}, Data: data}
	}
	tests := []struct {
		name       string
		objs       []runtime.Object
		wantSigned []string
		wantEvents int
	}{
		{"signs with signing tokens", []runtime.Object{info(nil), token("abcdef", "0123456789abcdef", true, later)}, []string{"abcdef"}, 0},
		{"skips non-signing and expired tokens", []runtime.Object{info(nil), token("aaaaaa", "0123456789abcdef", false, later), token("bbbbbb", "0123456789abcdef", true, earlier)}, nil, 0},
		{"drops stale signatures", []runtime.Object{info(map[string]string{"jws-kubeconfig-gone00": "x..y"})}, nil, 0},
		{"malformed token gets an event", []runtime.Object{info(nil), func() *corev1.Secret {
			s := token("cccccc", "0123456789abcdef", true, later)
			s.Name = "bootstrap-token-dddddd"
			return s
		}()}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := fake.NewClientset(tt.objs...)
			recorder := record.NewFakeRecorder(10)
			c, err := New(Options{Client: client, Recorder: recorder})
			if err != nil {
				t.Fatal(err)
			}
			c.public.Start(ctx.Done())
			c.system.Start(ctx.Done())
			cache.WaitForCacheSync(ctx.Done(), c.synced...)
			if err := c.sync(ctx, key); err != nil {
				t.Fatal(err)
			}
			cm, _ := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, "cluster-info", metav1.GetOptions{})
			sigs := 0
			for k := range cm.Data {
				if k != "kubeconfig" {
					sigs++
				}
			}
			if sigs != len(tt.wantSigned) {
				t.Errorf("data %v, want signatures of %v", cm.Data, tt.wantSigned)
			}
			for _, id := range tt.wantSigned {
				if !jws.DetachedTokenIsValid(cm.Data["jws-kubeconfig-"+id], kubeconfig, id, "0123456789abcdef") {
					t.Errorf("signature of %s does not verify", id)
				}
			}
			if len(recorder.Events) != tt.wantEvents {
				t.Errorf("events = %d, want %d", len(recorder.Events), tt.wantEvents)
			}
		})
	}
}
