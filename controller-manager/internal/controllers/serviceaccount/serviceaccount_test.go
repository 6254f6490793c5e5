package serviceaccount

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

func namespace(name string, phase corev1.NamespacePhase) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
}

func account(ns, name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
}

// start returns a controller over a fake clientset holding objs, with its
// informers synced, not yet running workers.
func start(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(Options{Client: client, Namespaces: factory.Core().V1().Namespaces(), ServiceAccounts: factory.Core().V1().ServiceAccounts(),
		Recorder: record.NewFakeRecorder(10), Accounts: []string{DefaultName}})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return c, client, ctx
}

func TestSync(t *testing.T) {
	tests := []struct {
		name      string
		objs      []runtime.Object
		namespace string
		wantSA    bool
		creates   int
	}{
		{"active namespace gets default", []runtime.Object{namespace("a", corev1.NamespaceActive)}, "a", true, 1},
		{"namespace without phase gets default", []runtime.Object{namespace("a", "")}, "a", true, 1},
		{"terminating namespace gets nothing", []runtime.Object{namespace("a", corev1.NamespaceTerminating)}, "a", false, 0},
		{"existing default is left alone", []runtime.Object{namespace("a", corev1.NamespaceActive), account("a", "default")}, "a", true, 0},
		{"deleted namespace is ignored", nil, "gone", false, 0},
		{"other accounts do not count", []runtime.Object{namespace("a", corev1.NamespaceActive), account("a", "builder")}, "a", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, client, ctx := start(t, tt.objs...)
			if err := c.sync(ctx, tt.namespace); err != nil {
				t.Fatalf("sync: %v", err)
			}
			creates := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "serviceaccounts" {
					creates++
				}
			}
			if creates != tt.creates {
				t.Errorf("creates = %d, want %d", creates, tt.creates)
			}
			_, err := client.CoreV1().ServiceAccounts(tt.namespace).Get(ctx, DefaultName, metav1.GetOptions{})
			if got := err == nil; got != tt.wantSA {
				t.Errorf("default exists = %v, want %v (err %v)", got, tt.wantSA, err)
			}
		})
	}
}

func TestRecreatesDeletedAccount(t *testing.T) {
	c, client, ctx := start(t, namespace("a", corev1.NamespaceActive))
	go c.Run(ctx, 1)
	waitForAccount(t, ctx, client, "a")
	if err := client.CoreV1().ServiceAccounts("a").Delete(ctx, DefaultName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForAccount(t, ctx, client, "a")
}

func TestNewNamespaceGetsAccount(t *testing.T) {
	c, client, ctx := start(t)
	go c.Run(ctx, 1)
	if _, err := client.CoreV1().Namespaces().Create(ctx, namespace("late", corev1.NamespaceActive), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForAccount(t, ctx, client, "late")
}

func waitForAccount(t *testing.T, ctx context.Context, client *fake.Clientset, ns string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, DefaultName, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("default serviceaccount in %s never appeared: %v", ns, err)
	}
}
