package namespace

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

// discoveryStub serves fixed namespaced resources.
type discoveryStub struct {
	*fakediscovery.FakeDiscovery
	lists []*metav1.APIResourceList
}

func (d discoveryStub) ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error) {
	return d.lists, nil
}

func cmMeta(name string, finalizers ...string) *metav1.PartialObjectMetadata {
	return objMeta("ConfigMap", name, finalizers...)
}

func objMeta(kind, name string, finalizers ...string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "doomed", Finalizers: finalizers},
	}
}

func TestSync(t *testing.T) {
	deleted := metav1.NewTime(time.Now())
	doomed := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "doomed", DeletionTimestamp: &deleted, Finalizers: []string{"keep-in-fake"}},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
	}
	verbs := metav1.Verbs{"get", "list", "delete"}
	tests := []struct {
		name          string
		objs          []runtime.Object
		wantFinalize  bool
		wantRemaining corev1.ConditionStatus
		wantMessage   string
		// wantLeft are the objects still there after the sync.
		wantLeft []string
	}{
		{"content deleted, then finalized", []runtime.Object{cmMeta("a"), cmMeta("b")}, true, corev1.ConditionFalse, "", nil},
		{"empty namespace finalized", nil, true, corev1.ConditionFalse, "", nil},
		{"finalizer holds content", []runtime.Object{cmMeta("held", "example.com/hold")}, false, corev1.ConditionTrue, "example.com/hold", []string{"held"}},
		{"pods go first, then the rest", []runtime.Object{objMeta("Pod", "p"), cmMeta("a")}, true, corev1.ConditionFalse, "", nil},
		{"a pod left holds the rest back", []runtime.Object{objMeta("Pod", "p", "example.com/hold"), cmMeta("a")}, false, corev1.ConditionTrue, "example.com/hold", []string{"a", "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			client := fake.NewClientset(doomed.DeepCopy())
			scheme := metadatafake.NewTestScheme()
			for _, kind := range []string{"ConfigMap", "Pod"} {
				scheme.AddKnownTypeWithName(schema.GroupVersionKind{Version: "v1", Kind: kind}, &metav1.PartialObjectMetadata{})
				scheme.AddKnownTypeWithName(schema.GroupVersionKind{Version: "v1", Kind: kind + "List"}, &metav1.PartialObjectMetadataList{})
			}
			meta := metadatafake.NewSimpleMetadataClient(scheme, tt.objs...)
			// The tracker deletes at once; an object with finalizers must
			// stay, marked, as the apiserver keeps it.
			meta.PrependReactor("delete", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
				name := a.(clienttesting.DeleteAction).GetName()
				for _, o := range tt.objs {
					if m := o.(*metav1.PartialObjectMetadata); m.Name == name && len(m.Finalizers) > 0 {
						return true, nil, nil
					}
				}
				return false, nil, nil
			})
			dc := discoveryStub{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}, lists: []*metav1.APIResourceList{{
				GroupVersion: "v1", APIResources: []metav1.APIResource{
					{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: verbs},
					{Name: "pods", Namespaced: true, Kind: "Pod", Verbs: verbs},
				},
			}}}
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := New(Options{Client: client, Metadata: meta, Discovery: dc, Namespaces: f.Core().V1().Namespaces(), Recorder: record.NewFakeRecorder(10)})
			if err != nil {
				t.Fatal(err)
			}
			f.Start(ctx.Done())
			f.WaitForCacheSync(ctx.Done())
			defer f.Shutdown()
			defer cancel()
			if err := c.sync(ctx, "doomed"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			finalized := false
			for _, a := range client.Actions() {
				if a.GetSubresource() == "finalize" {
					finalized = true
				}
			}
			if finalized != tt.wantFinalize {
				t.Errorf("finalized = %v, want %v", finalized, tt.wantFinalize)
			}
			ns, err := client.CoreV1().Namespaces().Get(ctx, "doomed", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var remaining *corev1.NamespaceCondition
			for i, c := range ns.Status.Conditions {
				if c.Type == corev1.NamespaceContentRemaining {
					remaining = &ns.Status.Conditions[i]
				}
			}
			if remaining == nil || remaining.Status != tt.wantRemaining {
				t.Fatalf("NamespaceContentRemaining = %+v, want %s", remaining, tt.wantRemaining)
			}
			for _, c := range ns.Status.Conditions {
				if c.Type == corev1.NamespaceFinalizersRemaining && !strings.Contains(c.Message, tt.wantMessage) {
					t.Errorf("finalizers message %q does not name %q", c.Message, tt.wantMessage)
				}
			}
			var left []string
			for _, r := range []string{"configmaps", "pods"} {
				list, err := meta.Resource(corev1.SchemeGroupVersion.WithResource(r)).Namespace("doomed").List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range list.Items {
					left = append(left, o.Name)
				}
			}
			if fmt.Sprint(left) != fmt.Sprint(tt.wantLeft) {
				t.Errorf("left %v, want %v", left, tt.wantLeft)
			}
		})
	}
}

func TestTally(t *testing.T) {
	got := tally(map[string]int{"pods.": 2, "widgets.example.com": 1}, "resource instances")
	want := "pods. has 2 resource instances, widgets.example.com has 1 resource instances"
	if got != want {
		t.Errorf("tally = %q, want %q", got, want)
	}
}
