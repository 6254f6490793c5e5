package namespacelookup

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestLookup(t *testing.T) {
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	// The cache sees "cached" only; the live client sees "live" as well, as
	// when a namespace was created after the informer's last event.
	factory := informers.NewSharedInformerFactory(fake.NewClientset(ns("cached")), 0)
	n := New(admission.Create)
	if err := n.ValidateInitialization(); err == nil {
		t.Fatal("uninitialised lookup validated")
	}
	n.SetExternalKubeClientSet(fake.NewClientset(ns("cached"), ns("live")))
	n.SetExternalKubeInformerFactory(factory)
	if err := n.ValidateInitialization(); err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	factory.WaitForCacheSync(t.Context().Done())
	if !n.WaitForReady() {
		t.Fatal("not ready after the informer synced")
	}
	tests := []struct {
		name           string
		cached, exists bool
	}{
		{name: "cached", cached: true, exists: true},
		{name: "live", cached: false, exists: true},
		{name: "missing", cached: false, exists: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := n.Cached(tt.name); got != tt.cached {
				t.Errorf("Cached(%s) = %v, want %v", tt.name, got, tt.cached)
			}
			got, err := n.Exists(context.Background(), tt.name)
			if err != nil || got != tt.exists {
				t.Errorf("Exists(%s) = %v, %v; want %v", tt.name, got, err, tt.exists)
			}
		})
	}
}
