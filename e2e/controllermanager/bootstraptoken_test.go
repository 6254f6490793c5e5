package controllermanager_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testwait"
)

// detachedJWS is the compact form with the payload left out.
var detachedJWS = regexp.MustCompile(`^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$`)

func testBootstrapTokens(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	token := func(id string, expires time.Time) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: metav1.NamespaceSystem},
			Type:       corev1.SecretTypeBootstrapToken,
			StringData: map[string]string{
				"token-id": id, "token-secret": "fedcba9876543210",
				"usage-bootstrap-signing": "true",
				"expiration":              expires.UTC().Format(time.RFC3339),
			},
		}
	}
	for _, s := range []*corev1.Secret{token("sign01", time.Now().Add(time.Hour)), token("gone01", time.Now().Add(-time.Minute))} {
		if _, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create token %s: %v", s.Name, err)
		}
	}
	info := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-info", Namespace: metav1.NamespacePublic},
		Data:       map[string]string{"kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n"},
	}
	if _, err := cs.CoreV1().ConfigMaps(metav1.NamespacePublic).Create(ctx, info, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create cluster-info: %v", err)
	}
	testwait.For(t, nodesTestTimeout, "cluster-info signed with token sign01", func(ctx context.Context) (bool, error) {
		cm, err := cs.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, "cluster-info", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if _, ok := cm.Data["jws-kubeconfig-gone01"]; ok {
			t.Errorf("cluster-info signed with expired token gone01")
		}
		return detachedJWS.MatchString(cm.Data["jws-kubeconfig-sign01"]), nil
	})
	testwait.For(t, nodesTestTimeout, "expired token gone01 deleted", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "bootstrap-token-gone01", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "bootstrap-token-sign01", metav1.GetOptions{}); err != nil {
		t.Errorf("unexpired token sign01: %v", err)
	}
}
