package rootcacertpublisher

import (
	"context"
	"maps"
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

const bundle = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func namespace(name string, phase corev1.NamespacePhase) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
}

func configMap(ns string, data map[string]string, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: ns, Annotations: annotations, Labels: map[string]string{"keep": "me"}},
		Data:       data,
	}
}

func start(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	p, err := New(Options{Client: client, Namespaces: factory.Core().V1().Namespaces(), ConfigMaps: factory.Core().V1().ConfigMaps(),
		Recorder: record.NewFakeRecorder(10), RootCA: []byte(bundle)})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return p, client, ctx
}

func TestSync(t *testing.T) {
	want := map[string]string{DataKey: bundle}
	described := map[string]string{DescriptionAnnotation: Description}
	tests := []struct {
		name     string
		objs     []runtime.Object
		want     bool // the ConfigMap exists afterwards with the bundle
		writes   int
		wantVerb string
	}{
		{"missing configmap is created", []runtime.Object{namespace("a", corev1.NamespaceActive)}, true, 1, "create"},
		{"stale bundle is replaced", []runtime.Object{namespace("a", corev1.NamespaceActive), configMap("a", map[string]string{DataKey: "old"}, described)}, true, 1, "update"},
		{"extra keys are dropped", []runtime.Object{namespace("a", corev1.NamespaceActive), configMap("a", map[string]string{DataKey: bundle, "x": "y"}, described)}, true, 1, "update"},
		{"missing description is added", []runtime.Object{namespace("a", corev1.NamespaceActive), configMap("a", want, nil)}, true, 1, "update"},
		{"current configmap is left alone", []runtime.Object{namespace("a", corev1.NamespaceActive), configMap("a", want, described)}, true, 0, ""},
		{"terminating namespace gets nothing", []runtime.Object{namespace("a", corev1.NamespaceTerminating)}, false, 0, ""},
		{"deleted namespace is ignored", nil, false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, client, ctx := start(t, tt.objs...)
			if err := p.sync(ctx, "a"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			var writes []string
			for _, a := range client.Actions() {
				if v := a.GetVerb(); v == "create" || v == "update" {
					writes = append(writes, v)
				}
			}
			if len(writes) != tt.writes || (tt.writes > 0 && writes[0] != tt.wantVerb) {
				t.Errorf("writes = %v, want %d %s", writes, tt.writes, tt.wantVerb)
			}
			cm, err := client.CoreV1().ConfigMaps("a").Get(ctx, ConfigMapName, metav1.GetOptions{})
			if !tt.want {
				if err == nil {
					t.Errorf("configmap exists, want none")
				}
				return
			}
			if err != nil {
				t.Fatalf("get configmap: %v", err)
			}
			if !maps.Equal(cm.Data, want) {
				t.Errorf("data = %v, want %v", cm.Data, want)
			}
			if cm.Annotations[DescriptionAnnotation] != Description {
				t.Errorf("description annotation = %q", cm.Annotations[DescriptionAnnotation])
			}
			if tt.wantVerb == "update" && cm.Labels["keep"] != "me" {
				t.Errorf("update lost the object's labels: %v", cm.Labels)
			}
		})
	}
}

func TestRepublishesAfterEditAndDelete(t *testing.T) {
	p, client, ctx := start(t, namespace("a", corev1.NamespaceActive))
	go p.Run(ctx, 1)
	waitForBundle(t, ctx, client)
	cm, err := client.CoreV1().ConfigMaps("a").Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[DataKey] = "tampered"
	if _, err := client.CoreV1().ConfigMaps("a").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForBundle(t, ctx, client)
	if err := client.CoreV1().ConfigMaps("a").Delete(ctx, ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForBundle(t, ctx, client)
}

func TestNewRefusesEmptyBundle(t *testing.T) {
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	if _, err := New(Options{Client: client, Namespaces: factory.Core().V1().Namespaces(), ConfigMaps: factory.Core().V1().ConfigMaps(),
		Recorder: record.NewFakeRecorder(1)}); err == nil {
		t.Fatal("New accepted an empty bundle")
	}
}

func waitForBundle(t *testing.T, ctx context.Context, client *fake.Clientset) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		cm, err := client.CoreV1().ConfigMaps("a").Get(ctx, ConfigMapName, metav1.GetOptions{})
		return err == nil && cm.Data[DataKey] == bundle, nil
	})
	if err != nil {
		t.Fatalf("bundle never published: %v", err)
	}
}
