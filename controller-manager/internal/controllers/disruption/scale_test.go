package disruption

import (
	"context"
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestScaleClient(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	mapper.Add(gv.WithKind("Widget"), meta.RESTScopeNamespace)
	mapper.Add(gv.WithKind("Gadget"), meta.RESTScopeNamespace)
	disco := fake.NewClientset().Discovery()
	disco.(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: gv.String(),
		APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget"}, {Name: "widgets/scale", Kind: "Scale"}, {Name: "gadgets", Kind: "Gadget"}},
	}}
	scales := &scalefake.FakeScaleClient{}
	scales.AddReactor("get", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		get := a.(clienttesting.GetAction)
		if get.GetResource().Resource != "widgets" || get.GetName() != "w" {
			return true, nil, apierrors.NewNotFound(get.GetResource().GroupResource(), get.GetName())
		}
		return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: "w-uid"}, Spec: autoscalingv1.ScaleSpec{Replicas: 7}}, nil
	})
	c := ScaleClient{Scales: scales, Mapper: mapper, Discovery: disco}
	tests := []struct {
		name         string
		ref          metav1.OwnerReference
		wantReplicas int32
		wantErr      string
	}{
		{"scale of a custom kind", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}, 7, ""},
		{"missing object", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "gone"}, 0, "not found"},
		{"kind without the subresource", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Gadget", Name: "g"}, 0, "gadgets.example.com does not implement the scale subresource"},
		{"unknown kind", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Sprocket", Name: "s"}, 0, "no matches for kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid, n, err := c.Scale(context.Background(), "ns", &tt.ref)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || uid != "w-uid" || n != tt.wantReplicas {
				t.Errorf("got %q %d %v, want w-uid %d", uid, n, err, tt.wantReplicas)
			}
		})
	}
}
