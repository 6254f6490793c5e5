package history

import (
	"context"
	"encoding/json"
	"math"
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

// The wanted values were computed by upstream's own functions
// (k8s.io/kubernetes v1.37.2 pkg/controller.ComputeHash and
// pkg/controller/history.HashControllerRevision) over the same JSON,
// decoded the same way, in a throwaway program outside this repository.
func TestPodTemplateHashMatchesUpstream(t *testing.T) {
	const (
		nginx          = `{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2","ports":[{"containerPort":80}]}]}}`
		nginxDefaulted = `{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}}`
		ordered        = `{"metadata":{"labels":{"b":"2","a":"1","c":"3"},"annotations":{"z":"last","k":"mid"}},"spec":{"containers":[{"name":"c","image":"busybox","command":["sleep","3600"],"env":[{"name":"X","value":"y"}]}],"nodeSelector":{"zone":"a","disk":"ssd"}}}`
	)
	tests := []struct {
		name      string
		template  string
		collision *int32
		want      string
	}{
		{"empty template", `{}`, nil, "54f4c57dcb"},
		{"empty template, collision 0", `{}`, ptr.To[int32](0), "98789f664"},
		{"empty template, collision 1", `{}`, ptr.To[int32](1), "6554565b97"},
		{"nginx", nginx, nil, "7df89985c6"},
		{"nginx, collision 2", nginx, ptr.To[int32](2), "6d46ccb4b6"},
		{"nginx, collision max", nginx, ptr.To[int32](math.MaxInt32), "6459d76fd8"},
		{"nginx as the apiserver defaults it", nginxDefaulted, nil, "54fd4d6d4c"},
		{"maps hash in key order", ordered, nil, "cdd98f545"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tmpl corev1.PodTemplateSpec
			if err := json.Unmarshal([]byte(tt.template), &tmpl); err != nil {
				t.Fatal(err)
			}
			if got := PodTemplateHash(&tmpl, tt.collision); got != tt.want {
				t.Errorf("PodTemplateHash = %s, upstream's is %s", got, tt.want)
			}
		})
	}
}

func TestRevisionHashMatchesUpstream(t *testing.T) {
	const patch = `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx","name":"nginx"}]}}}}`
	tests := []struct {
		name      string
		collision *int32
		want      string
	}{
		{"no collision count", nil, "556754694b"},
		{"collision 0", ptr.To[int32](0), "67877dbf6b"},
		{"collision 12", ptr.To[int32](12), "6d4b999bc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Hash([]byte(patch), tt.collision); got != tt.want {
				t.Errorf("Hash = %s, upstream's is %s", got, tt.want)
			}
		})
	}
}
