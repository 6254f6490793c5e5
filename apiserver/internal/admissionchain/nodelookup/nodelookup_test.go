package nodelookup

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestGet(t *testing.T) {
	cached := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cached"}}
	client := fake.NewClientset(cached)
	factory := informers.NewSharedInformerFactory(client, 0)
	var n Nodes
	if err := n.ValidateInitialization(); err == nil {
		t.Fatal("uninitialised lookup validated")
	}
	n.SetExternalKubeClientSet(client)
	n.SetExternalKubeInformerFactory(factory)
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	// A node created after the cache synced is read live until the
	// informer catches up.
	if _, err := client.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		found bool
	}{{"cached", true}, {"fresh", true}, {"missing", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node, err := n.Get(context.Background(), tt.name)
			if err != nil || (node != nil) != tt.found {
				t.Fatalf("Get(%s) = %v, %v; want found=%v", tt.name, node, err, tt.found)
			}
		})
	}
}
