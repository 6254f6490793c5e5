package history

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

var kind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

func owner() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "u"}}
}

func template(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
}

func TestSync(t *testing.T) {
	ctx := context.Background()
	o := owner()
	rev := func(image string, n int64) *appsv1.ControllerRevision {
		data, err := TemplatePatch(template(image))
		if err != nil {
			t.Fatal(err)
		}
		return New(o, kind, nil, data, n, ptr.To(int32(0)))
	}
	tests := []struct {
		name         string
		existing     []*appsv1.ControllerRevision
		want         *appsv1.ControllerRevision
		wantRevision int64
		wantCount    int
	}{
		{"creates the first", nil, rev("a", 1), 1, 1},
		{"same data as newest is reused", []*appsv1.ControllerRevision{rev("a", 1)}, rev("a", 2), 1, 1},
		{"rollback renumbers the old revision", []*appsv1.ControllerRevision{rev("a", 1), rev("b", 2)}, rev("a", 3), 3, 2},
		{"new data appends", []*appsv1.ControllerRevision{rev("a", 1)}, rev("b", 2), 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			for _, r := range tt.existing {
				if _, err := cs.AppsV1().ControllerRevisions("ns").Create(ctx, r, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			got, _, err := Sync(ctx, cs, tt.existing, tt.want, func(*int32) *appsv1.ControllerRevision { return tt.want }, 0)
			if err != nil {
				t.Fatal(err)
			}
			list, _ := cs.AppsV1().ControllerRevisions("ns").List(ctx, metav1.ListOptions{})
			if got.Revision != tt.wantRevision || len(list.Items) != tt.wantCount {
				t.Errorf("revision %d, %d revisions; want %d, %d", got.Revision, len(list.Items), tt.wantRevision, tt.wantCount)
			}
		})
	}
}

func TestHashDependsOnCollisionCount(t *testing.T) {
	if Hash([]byte("x"), ptr.To(int32(0))) == Hash([]byte("x"), ptr.To(int32(1))) {
		t.Error("collision count does not change the hash")
	}
}
