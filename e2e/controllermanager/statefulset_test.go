package controllermanager_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

// order records the order pods first appear in and whether every lower
// ordinal was ready by then.
type order struct {
	mu      sync.Mutex
	seen    map[string]bool
	created []string
	early   []string
}

func (o *order) observe(all []*corev1.Pod) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ready := map[string]bool{}
	for _, p := range all {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready[p.Name] = true
			}
		}
	}
	for _, p := range all {
		if o.seen[p.Name] {
			continue
		}
		o.seen[p.Name] = true
		o.created = append(o.created, p.Name)
		var ord int
		fmt.Sscanf(p.Name[strings.LastIndex(p.Name, "-")+1:], "%d", &ord)
		for i := range ord {
			if !ready[fmt.Sprintf("db-%d", i)] {
				o.early = append(o.early, fmt.Sprintf("%s before db-%d was ready", p.Name, i))
			}
		}
	}
}

func TestStatefulSetOrderedWithClaimsAndRollingUpdate(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "sts")
	ctx := context.Background()
	o := &order{seen: map[string]bool{}}
	startKubelet(t, cs, ns, running, o.observe)
	labels := map[string]string{"app": "db"}
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(int32(3)),
			ServiceName: "db",
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.example/db:1"}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rolloutStatus(t, ns, "statefulset/db")
	o.mu.Lock()
	created, early := o.created, o.early
	o.mu.Unlock()
	if want := []string{"db-0", "db-1", "db-2"}; fmt.Sprint(created) != fmt.Sprint(want) {
		t.Errorf("pods created in order %v, want %v", created, want)
	}
	if len(early) > 0 {
		t.Errorf("OrderedReady broken: %v", early)
	}
	for i := range 3 {
		name := fmt.Sprintf("data-db-%d", i)
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("claim %s: %v", name, err)
		}
		p, err := cs.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("db-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "db" || p.Labels[appsv1.StatefulSetPodNameLabel] != p.Name {
			t.Errorf("pod %s identity: hostname %q subdomain %q label %q", p.Name, p.Spec.Hostname, p.Spec.Subdomain, p.Labels[appsv1.StatefulSetPodNameLabel])
		}
	}

	kubectl(t, "-n", ns, "set", "image", "statefulset/db", "db=registry.example/db:2")
	rolloutStatus(t, ns, "statefulset/db")
	wantImages(t, ns, "app=db", "registry.example/db:2", 3)
	got, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.CurrentRevision != got.Status.UpdateRevision || got.Status.UpdatedReplicas != 3 {
		t.Errorf("after rollout: currentRevision %q updateRevision %q updated %d", got.Status.CurrentRevision, got.Status.UpdateRevision, got.Status.UpdatedReplicas)
	}
	hist := kubectl(t, "-n", ns, "rollout", "history", "statefulset/db").Stdout
	if !strings.Contains(hist, "2 ") {
		t.Errorf("rollout history lacks revision 2:\n%s", hist)
	}

	kubectl(t, "-n", ns, "scale", "statefulset/db", "--replicas=1")
	testwait.For(t, 30*time.Second, "scale down to db-0", func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 1 && pods.Items[0].Name == "db-0", err
	})
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-db-2", metav1.GetOptions{}); err != nil {
		t.Errorf("claim of a scaled-down replica is retained by default: %v", err)
	}
}
