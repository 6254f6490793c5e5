package resourcequota

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/record"
)

func quota(name string, hard corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard, Scopes: scopes},
	}
}

func partial(apiVersion, kind, ns, name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
	}
}

type harness struct {
	c      *Controller
	client *fake.Clientset
	ctx    context.Context
}

// start builds the controller over fake clients: objs in the typed
// clientset, metas in the metadata client (which serves count/...).
func start(t *testing.T, objs []runtime.Object, metas []runtime.Object) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	metaClient := metadatafake.NewSimpleMetadataClient(scheme, metas...)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	core := factory.Core().V1()
	c, err := New(Options{
		Client: client, Quotas: core.ResourceQuotas(), Pods: core.Pods(), Services: core.Services(),
		Claims: core.PersistentVolumeClaims(), Metadata: metadatainformer.NewSharedInformerFactory(metaClient, 0),
		Resolver: mapper, Recorder: record.NewFakeRecorder(10), SyncPeriod: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	c.counter.run(ctx)
	return &harness{c: c, client: client, ctx: ctx}
}

// syncUntilSettled syncs key until no count is pending, as the queue's
// delayed retries would.
func (h *harness) syncUntilSettled(t *testing.T, key string) {
	t.Helper()
	for range 100 {
		if err := h.c.sync(h.ctx, key); err != nil {
			t.Fatalf("sync: %v", err)
		}
		q, err := h.c.quotas.ResourceQuotas("ns").Get("q")
		if err != nil {
			t.Fatal(err)
		}
		if _, pending, _ := h.c.usage(q); !pending {
			if err := h.c.sync(h.ctx, key); err != nil {
				t.Fatalf("sync: %v", err)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("counts never became ready")
}

func (h *harness) status(t *testing.T) corev1.ResourceQuotaStatus {
	t.Helper()
	q, err := h.client.CoreV1().ResourceQuotas("ns").Get(h.ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q.Status
}

func TestSync(t *testing.T) {
	running := func(name string, requests, limits corev1.ResourceList) *corev1.Pod {
		p := pod(name, requests, limits)
		p.Status.Phase = corev1.PodRunning
		return p
	}
	done := pod("done", list("cpu", "4"), nil)
	done.Status.Phase = corev1.PodSucceeded
	elsewhere := pod("elsewhere", list("cpu", "4"), nil)
	elsewhere.Namespace = "other"
	nodePort := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: list("storage", "5Gi")}}}

	tests := []struct {
		name  string
		quota *corev1.ResourceQuota
		objs  []runtime.Object
		metas []runtime.Object
		want  corev1.ResourceList
	}{
		{
			name:  "pods and compute resources of charged pods in the namespace",
			quota: quota("q", list("pods", "10", "requests.cpu", "4", "limits.memory", "1Gi", "count/pods", "10")),
			objs: []runtime.Object{
				running("a", list("cpu", "500m"), list("memory", "128Mi")),
				running("b", list("cpu", "250m"), list("memory", "64Mi")),
				done, elsewhere,
			},
			want: list("pods", "2", "count/pods", "2", "requests.cpu", "750m", "limits.memory", "192Mi"),
		},
		{
			name:  "BestEffort scope counts only best effort pods",
			quota: quota("q", list("pods", "10"), corev1.ResourceQuotaScopeBestEffort),
			objs:  []runtime.Object{running("a", nil, nil), running("b", list("cpu", "1"), nil)},
			want:  list("pods", "1"),
		},
		{
			name:  "empty namespace uses zero",
			quota: quota("q", list("pods", "10", "services", "2", "requests.storage", "1Gi")),
			want:  list("pods", "0", "services", "0", "requests.storage", "0"),
		},
		{
			name:  "services and node ports",
			quota: quota("q", list("services", "5", "services.nodeports", "5", "services.loadbalancers", "1")),
			objs:  []runtime.Object{nodePort},
			want:  list("services", "1", "services.nodeports", "2", "services.loadbalancers", "0"),
		},
		{
			name:  "claims and storage",
			quota: quota("q", list("persistentvolumeclaims", "5", "requests.storage", "10Gi")),
			objs:  []runtime.Object{claim},
			want:  list("persistentvolumeclaims", "1", "requests.storage", "5Gi"),
		},
		{
			name:  "object counts from metadata",
			quota: quota("q", list("configmaps", "10", "count/secrets", "10", "count/deployments.apps", "3")),
			metas: []runtime.Object{
				partial("v1", "ConfigMap", "ns", "a"), partial("v1", "ConfigMap", "ns", "b"),
				partial("v1", "ConfigMap", "other", "c"), partial("v1", "Secret", "ns", "s"),
				partial("apps/v1", "Deployment", "ns", "d"),
			},
			want: list("configmaps", "2", "count/secrets", "1", "count/deployments.apps", "1"),
		},
		{
			name:  "names nothing counts are left out",
			quota: quota("q", list("pods", "1", "count/widgets.example.com", "3", "bogus", "1")),
			want:  list("pods", "0"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, append([]runtime.Object{tt.quota}, tt.objs...), tt.metas)
			h.syncUntilSettled(t, "ns/q")
			st := h.status(t)
			if !equalLists(st.Hard, tt.quota.Spec.Hard) {
				t.Errorf("status.hard = %v, want %v", st.Hard, tt.quota.Spec.Hard)
			}
			if !equalLists(st.Used, tt.want) {
				t.Errorf("status.used = %v, want %v", st.Used, tt.want)
			}
		})
	}
}

func TestSyncWritesOnlyChanges(t *testing.T) {
	q := quota("q", list("pods", "2"))
	q.Status = corev1.ResourceQuotaStatus{Hard: list("pods", "2"), Used: list("pods", "0")}
	h := start(t, []runtime.Object{q}, nil)
	if err := h.c.sync(h.ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	for _, a := range h.client.Actions() {
		if a.GetVerb() == "update" {
			t.Fatalf("status written although unchanged: %v", a)
		}
	}
}

func TestReplenishment(t *testing.T) {
	running := pod("a", nil, nil)
	running.Status.Phase = corev1.PodRunning
	h := start(t, []runtime.Object{quota("q", list("pods", "5", "services", "5")), running}, nil)
	go h.c.Run(h.ctx, 2)
	waitForUsed(t, h, list("pods", "1", "services", "0"))

	if _, err := h.client.CoreV1().Services("ns").Create(h.ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForUsed(t, h, list("pods", "1", "services", "1"))

	finished := running.DeepCopy()
	finished.Status.Phase = corev1.PodSucceeded
	if _, err := h.client.CoreV1().Pods("ns").UpdateStatus(h.ctx, finished, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForUsed(t, h, list("pods", "0", "services", "1"))

	// A change of spec.hard shows in status.hard.
	q, err := h.client.CoreV1().ResourceQuotas("ns").Get(h.ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard = list("pods", "7")
	if _, err := h.client.CoreV1().ResourceQuotas("ns").Update(h.ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForUsed(t, h, list("pods", "0"))
	if st := h.status(t); !equalLists(st.Hard, list("pods", "7")) {
		t.Errorf("status.hard = %v, want pods=7", st.Hard)
	}
}

func waitForUsed(t *testing.T, h *harness, want corev1.ResourceList) {
	t.Helper()
	var last corev1.ResourceList
	err := wait.PollUntilContextTimeout(h.ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		last = h.status(t).Used
		return equalLists(last, want), nil
	})
	if err != nil {
		t.Fatalf("status.used = %v, want %v", last, want)
	}
}

// countingResolver counts discovery lookups.
type countingResolver struct {
	Resolver
	calls int
}

func (r *countingResolver) ResourceFor(in schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	r.calls++
	return r.Resolver.ResourceFor(in)
}

func TestUnknownResourceIsNotLookedUpAtEverySync(t *testing.T) {
	h := start(t, []runtime.Object{quota("q", list("count/widgets.example.com", "3"))}, nil)
	r := &countingResolver{Resolver: h.c.counter.resolver}
	h.c.counter.resolver = r
	now := time.Now()
	h.c.counter.now = func() time.Time { return now }
	for range 3 {
		if err := h.c.sync(h.ctx, "ns/q"); err != nil {
			t.Fatal(err)
		}
	}
	if r.calls != 1 {
		t.Errorf("discovery asked %d times in a minute, want 1", r.calls)
	}
	now = now.Add(2 * unknownRetry)
	if err := h.c.sync(h.ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	if r.calls != 2 {
		t.Errorf("discovery asked %d times after the retry interval, want 2", r.calls)
	}
}

// TestCreationsOnlyRaiseUsage: admission charges a quota before the
// objects it admits reach this controller's cache, so a sync for a
// creation must not count the quota back down (the next pods would pass
// it, as upstream's conformance spec "should surface a failure condition
// on a common issue like exceeded quota" saw); a change that frees usage
// may.
func TestCreationsOnlyRaiseUsage(t *testing.T) {
	q := quota("q", list("pods", "2"))
	q.Status = corev1.ResourceQuotaStatus{Hard: list("pods", "2"), Used: list("pods", "2")}
	running := pod("a", nil, nil)
	running.Status.Phase = corev1.PodRunning
	h := start(t, []runtime.Object{q, running}, nil)
	h.c.takeLower("ns/q")

	h.c.enqueue("ns/q", false)
	if err := h.c.sync(h.ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	if st := h.status(t); !equalLists(st.Used, list("pods", "2")) {
		t.Errorf("after a creation: status.used = %v, want the charged pods=2", st.Used)
	}
	h.c.enqueue("ns/q", true)
	if err := h.c.sync(h.ctx, "ns/q"); err != nil {
		t.Fatal(err)
	}
	if st := h.status(t); !equalLists(st.Used, list("pods", "1")) {
		t.Errorf("after a deletion: status.used = %v, want the counted pods=1", st.Used)
	}
}
