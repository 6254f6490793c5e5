package tokencleaner

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

func TestSync(t *testing.T) {
	tests := []struct {
		name        string
		expiration  string
		wantDeleted bool
	}{
		{"expired token deleted", time.Now().Add(-time.Minute).Format(time.RFC3339), true},
		{"valid token kept", time.Now().Add(time.Hour).Format(time.RFC3339), false},
		{"token without expiration kept", "", false},
		{"unparseable expiration counts as expired", "tomorrow", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: metav1.NamespaceSystem},
				Type: corev1.SecretTypeBootstrapToken, Data: map[string][]byte{"token-id": []byte("abcdef")}}
			if tt.expiration != "" {
				s.Data["expiration"] = []byte(tt.expiration)
			}
			client := fake.NewClientset(s)
			c, err := New(Options{Client: client})
			if err != nil {
				t.Fatal(err)
			}
			c.factory.Start(ctx.Done())
			cache.WaitForCacheSync(ctx.Done(), c.synced)
			if err := c.sync(ctx, "kube-system/bootstrap-token-abcdef"); err != nil {
				t.Fatal(err)
			}
			_, err = client.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, s.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) != tt.wantDeleted {
				t.Errorf("deleted = %v, want %v", apierrors.IsNotFound(err), tt.wantDeleted)
			}
		})
	}
}
