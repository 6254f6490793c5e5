package controllermanager_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	clientv3 "go.etcd.io/etcd/client/v3"

	"trireme.dev/componentbase/testcluster"

	"trireme.dev/componentbase/testwait"
)

// TestMalformedStoredObjects gives the controllers objects the apiserver's
// validation refuses today, as an older version could have stored them: a
// Deployment whose selector does not match its template and a CronJob whose
// schedule does not parse, written straight into etcd. Each gets a Warning
// Event, neither gets a ReplicaSet or a Job, and a well-formed Deployment and
// CronJob beside them still roll out and fire.
func TestMalformedStoredObjects(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "malformed")
	ctx := context.Background()
	startKubelet(t, cs, ns, running, nil)

	// A dry-run create answers with what the server itself would store
	// (defaults, uid, creation time); the test spoils that and stores it.
	badDeploy, err := cs.AppsV1().Deployments(ns).Create(ctx, webDeployment("mismatch", 2, "registry.example/web:a", 1, 0), dryRun)
	if err != nil {
		t.Fatalf("dry-run create deployment: %v", err)
	}
	storeMalformed(t, "deployments", appsv1.SchemeGroupVersion.WithKind("Deployment"), badDeploy, func(o map[string]any) {
		// The template's labels no longer carry what the selector asks for.
		setField(o, map[string]any{"app": "something-else"}, "spec", "template", "metadata", "labels")
	})
	badCron, err := cs.BatchV1().CronJobs(ns).Create(ctx, cronJob("badschedule", "* * * * *"), dryRun)
	if err != nil {
		t.Fatalf("dry-run create cronjob: %v", err)
	}
	storeMalformed(t, "cronjobs", batchv1.SchemeGroupVersion.WithKind("CronJob"), badCron, func(o map[string]any) {
		setField(o, "every full moon", "spec", "schedule")
	})

	// Only storage can hold them: the API refuses both.
	spoiltDeploy := webDeployment("mismatch-api", 2, "registry.example/web:a", 1, 0)
	spoiltDeploy.Spec.Template.Labels = map[string]string{"app": "something-else"}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, spoiltDeploy, dryRun); !apierrors.IsInvalid(err) {
		t.Errorf("create a Deployment whose selector does not match its template: %v, want Invalid", err)
	}
	if _, err := cs.BatchV1().CronJobs(ns).Create(ctx, cronJob("badschedule-api", "every full moon"), dryRun); !apierrors.IsInvalid(err) {
		t.Errorf("create a CronJob with schedule %q: %v, want Invalid", "every full moon", err)
	}

	// Upstream's deployment controller has no reason for a mismatched
	// selector (its validation never lets one through); ours says
	// SelectorMismatch. UnparseableSchedule is upstream's.
	waitWarning(t, cs, ns, "mismatch", "SelectorMismatch")
	waitWarning(t, cs, ns, "badschedule", "UnparseableSchedule")

	// Everything else still works: a Deployment rolls out and a CronJob
	// whose schedule time has come fires.
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, webDeployment("good", 2, "registry.example/web:a", 1, 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.BatchV1().CronJobs(ns).Create(ctx, cronJob("good", "* * * * *"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A run two minutes ago makes the next schedule time already due, so
	// the test need not wait for the clock's next minute.
	lastRun := metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Minute))
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cj, err := cs.BatchV1().CronJobs(ns).Get(ctx, "good", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cj.Status.LastScheduleTime = &lastRun
		_, err = cs.BatchV1().CronJobs(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("set the good CronJob's last schedule time: %v", err)
	}
	rolloutStatus(t, ns, "deployment/good")
	waitForIn(t, ns, 60*time.Second, "the good CronJob to fire", func(ctx context.Context) (bool, error) {
		jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, j := range jobs.Items {
			if ref := metav1.GetControllerOf(&j); ref != nil && ref.Name == "good" && j.Annotations[batchv1.CronJobScheduledTimestampAnnotation] != "" {
				return true, nil
			}
		}
		return false, nil
	})

	// The malformed objects got nothing made for them.
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range rss.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && ref.Name == "mismatch" {
			t.Errorf("the mismatched Deployment got ReplicaSet %s", rs.Name)
		}
	}
	jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		if ref := metav1.GetControllerOf(&j); ref != nil && ref.Name == "badschedule" {
			t.Errorf("the CronJob with a bad schedule fired Job %s", j.Name)
		}
	}
	if lines := srv.ControllerManagerPanics(); len(lines) > 0 {
		t.Errorf("the controller-manager panicked:\n%s", strings.Join(lines, "\n"))
	}
	if err := srv.ControllerManagerExited(); err != nil {
		t.Error(err)
	}
}

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

func cronJob(name, schedule string) *batchv1.CronJob {
	j := batchJob(name, 1, 1, 0)
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule:          schedule,
			ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate:       batchv1.JobTemplateSpec{Spec: j.Spec},
		},
	}
}

// storeMalformed writes stored, an object as the apiserver would store it,
// into etcd under the apiserver's key for it, spoilt by spoil: as an older
// server could have stored it. Storage accepts JSON beside protobuf.
func storeMalformed(t *testing.T, resource string, gvk schema.GroupVersionKind, stored runtime.Object, spoil func(map[string]any)) {
	t.Helper()
	meta := stored.(metav1.Object)
	if meta.GetUID() == "" || meta.GetCreationTimestamp().Time.IsZero() {
		t.Fatalf("dry-run %s lacks uid or creation time: %+v", meta.GetName(), stored)
	}
	// Storage holds no resourceVersion: etcd's revision is the version.
	meta.SetResourceVersion("")
	stored.GetObjectKind().SetGroupVersionKind(gvk)
	raw, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	spoil(fields)
	if raw, err = json.Marshal(fields); err != nil {
		t.Fatal(err)
	}
	key := strings.Join([]string{testcluster.StoragePrefix, resource, meta.GetNamespace(), meta.GetName()}, "/")
	cli := etcdClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Create only: a key that exists means the layout is not what the test
	// thinks it is.
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(raw))).
		Commit()
	if err != nil {
		t.Fatalf("put %s into etcd: %v", key, err)
	}
	if !resp.Succeeded {
		t.Fatalf("etcd key %s already exists", key)
	}
	// The apiserver serves it back, so key and encoding are what it uses.
	testwait.For(t, 30*time.Second, "the apiserver to serve "+key, func(ctx context.Context) (bool, error) {
		res := srv.Kubectl(t, "-n", meta.GetNamespace(), "get", resource+"/"+meta.GetName(), "-o", "name")
		return res.ExitCode == 0, nil
	})
}

// etcdClient connects to the suite's etcd and closes the client when the
// test ends.
func etcdClient(t *testing.T) *clientv3.Client {
	t.Helper()
	ep := srv.EtcdEndpoint()
	if ep == "" {
		t.Fatal("the suite's apiserver runs without a separate etcd (testcluster.APIServerOptions.ExternalEtcd)")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("etcd client for %s: %v", ep, err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// setField sets a nested field of a decoded JSON object.
func setField(obj map[string]any, value any, path ...string) {
	for _, p := range path[:len(path)-1] {
		next, ok := obj[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[p] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = value
}

// waitWarning waits for a Warning Event with reason on the named object.
func waitWarning(t *testing.T, cs kubernetes.Interface, ns, name, reason string) {
	t.Helper()
	waitForIn(t, ns, 30*time.Second, "a Warning Event "+reason+" on "+name, func(ctx context.Context) (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Type == "Warning" && e.Reason == reason {
				t.Logf("event on %s: %s %s: %s", name, e.Type, e.Reason, e.Message)
				return true, nil
			}
		}
		return false, nil
	})
}
