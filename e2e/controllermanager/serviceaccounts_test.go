package controllermanager_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/componentbase/testwait"
)

// TestControllersUseOwnServiceAccounts checks that the suite's
// controller-manager runs each controller as its own ServiceAccount in
// kube-system (--use-service-account-credentials, testcluster's
// default), so every other test here also tests the controllers' RBAC
// roles.
func TestControllersUseOwnServiceAccounts(t *testing.T) {
	cs := srv.Clientset(t)
	for _, name := range []string{"generic-garbage-collector", "namespace-controller", "endpointslice-controller", "resourcequota-controller"} {
		testwait.For(t, 30*time.Second, "service account "+name, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().ServiceAccounts("kube-system").Get(ctx, name, metav1.GetOptions{})
			return err == nil, nil
		})
	}
}
