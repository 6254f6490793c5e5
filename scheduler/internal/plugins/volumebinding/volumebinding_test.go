package volumebinding

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func class(name, provisioner string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		c.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: "zone", Values: zones}}}}
	}
	return c
}

func claim(name, className, volume string) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			StorageClassName: &className,
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeName:       volume,
		},
	}
	if volume != "" {
		c.Status.Phase = v1.ClaimBound
	}
	return c
}

func localPV(name, className, node, size string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:       className,
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

func withClaims(p *v1.Pod, claims ...string) *v1.Pod {
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func nodes() []*v1.Node {
	a := plugintest.Node("a", "4", "kubernetes.io/hostname", "a", "zone", "z1")
	b := plugintest.Node("b", "4", "kubernetes.io/hostname", "b", "zone", "z2")
	return []*v1.Node{a, b}
}

func objects() []runtime.Object {
	bound := localPV("pv-bound", "local", "a", "1Gi")
	bound.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "bound", UID: "uid-bound"}
	bound.Status.Phase = v1.VolumeBound
	return []runtime.Object{
		class("local", noProvisioner, storagev1.VolumeBindingWaitForFirstConsumer),
		class("zonal", "csi.example.com", storagev1.VolumeBindingWaitForFirstConsumer, "z2"),
		class("immediate", "csi.example.com", storagev1.VolumeBindingImmediate),
		bound,
		claim("bound", "local", "pv-bound"),
		claim("dangling", "local", "pv-missing"),
		claim("wffc", "local", ""),
		claim("wffc2", "local", ""),
		claim("zonal", "zonal", ""),
		claim("immediate", "immediate", ""),
		localPV("pv-b-small", "local", "b", "1Gi"),
		localPV("pv-b-big", "local", "b", "10Gi"),
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name      string
		claims    []string
		preFilter string            // PreFilter rejection, if any
		want      map[string]string // node → reason ("" fits)
	}{
		{name: "no claims", want: map[string]string{"a": "", "b": ""}},
		{name: "missing claim", claims: []string{"nope"}, preFilter: `persistentvolumeclaim "nope" not found`},
		{name: "bound to missing volume", claims: []string{"dangling"}, preFilter: ErrReasonPVNotExist},
		{name: "unbound immediate claim", claims: []string{"immediate"}, preFilter: ErrReasonUnboundImmediatePVC},
		{name: "bound claim follows its volume", claims: []string{"bound"}, want: map[string]string{"a": "", "b": ErrReasonNodeConflict}},
		{name: "WaitForFirstConsumer claim goes where a volume is", claims: []string{"wffc"}, want: map[string]string{"a": ErrReasonBindConflict, "b": ""}},
		{name: "two claims need two volumes", claims: []string{"wffc", "wffc2"}, want: map[string]string{"a": ErrReasonBindConflict, "b": ""}},
		{name: "bound and unbound claims conflict", claims: []string{"bound", "wffc"}, want: map[string]string{"a": ErrReasonBindConflict, "b": ErrReasonNodeConflict}},
		{name: "provisioning honours allowed topologies", claims: []string{"zonal"}, want: map[string]string{"a": ErrReasonBindConflict, "b": ""}},
	}
	h := plugintest.NewWithObjects(t, framework.Registry{Name: New}, []string{Name}, nil, nodes(), nil, objects())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pre := h.Filter(t, withClaims(plugintest.Pod("p", "", ""), tt.claims...))
			if tt.preFilter != "" {
				if pre.IsSuccess() || pre.Message() != tt.preFilter {
					t.Fatalf("PreFilter %v, want %q", pre, tt.preFilter)
				}
				return
			}
			for node, reason := range tt.want {
				if reason == "" && !got[node].IsSuccess() {
					t.Errorf("node %s: %v, want fit", node, got[node])
				}
				if reason != "" && (got[node].IsSuccess() || got[node].Message() != reason) {
					t.Errorf("node %s: %v, want %q", node, got[node], reason)
				}
			}
		})
	}
}

// TestReservePreBind checks that a reserved volume is withheld from other
// pods, that PreBind writes the volume's claimRef and then waits for the
// claim to bind, and that a cancelled binding cycle stops the wait.
func TestReservePreBind(t *testing.T) {
	h := plugintest.NewWithObjects(t, framework.Registry{Name: New}, []string{Name},
		map[string]runtime.Object{Name: &configv1.VolumeBindingArgs{BindTimeoutSeconds: ptr.To[int64](5)}}, nodes(), nil, objects())
	ctx := context.Background()
	all, _ := h.Snapshot.NodeInfos().List()
	var b fwk.NodeInfo
	for _, ni := range all {
		if ni.Node().Name == "b" {
			b = ni
		}
	}
	cycle := func(pod *v1.Pod) (*framework.CycleState, *fwk.Status) {
		state := framework.NewCycleState()
		if _, st, _ := h.RunPreFilterPlugins(ctx, state, pod, all); !st.IsSuccess() {
			return state, st
		}
		return state, h.RunFilterPlugins(ctx, state, pod, b)
	}
	p1 := withClaims(plugintest.Pod("p1", "", ""), "wffc")
	state, st := cycle(p1)
	if !st.IsSuccess() {
		t.Fatalf("first pod: %v", st)
	}
	if st := h.RunReservePluginsReserve(ctx, state, p1, "b"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	// The small volume is held for p1; a second pod's claim gets the big one.
	s, _ := getState(state)
	if s.chosen[0].pv.Name != "pv-b-small" {
		t.Fatalf("chose %s, want the smallest fitting volume", s.chosen[0].pv.Name)
	}
	p2 := withClaims(plugintest.Pod("p2", "", ""), "wffc2")
	state2, st := cycle(p2)
	if !st.IsSuccess() {
		t.Fatalf("second pod: %v", st)
	}
	h.RunReservePluginsReserve(ctx, state2, p2, "b")
	if s2, _ := getState(state2); s2.chosen[0].pv.Name != "pv-b-big" {
		t.Fatalf("second pod chose %s, want pv-b-big", s2.chosen[0].pv.Name)
	}
	// A third claim finds nothing left on b.
	p3 := withClaims(plugintest.Pod("p3", "", ""), "wffc")
	if _, st := cycle(p3); st.IsSuccess() || st.Message() != ErrReasonBindConflict {
		t.Fatalf("third pod: %v, want %q", st, ErrReasonBindConflict)
	}
	h.RunReservePluginsUnreserve(ctx, state2, p2, "b")

	// PreBind writes the claimRef and waits; the test plays the binder.
	done := make(chan *fwk.Status)
	go func() { done <- h.RunPreBindPlugins(ctx, state, p1, "b") }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pv, err := h.Client.CoreV1().PersistentVolumes().Get(ctx, "pv-b-small", metav1.GetOptions{})
		if err == nil && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Name == "wffc" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("volume not bound to the claim: %v %v", pv, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case st := <-done:
		t.Fatalf("PreBind returned before the claim was bound: %v", st)
	case <-time.After(200 * time.Millisecond):
	}
	c := claim("wffc", "local", "pv-b-small")
	if _, err := h.Client.CoreV1().PersistentVolumeClaims("default").Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := <-done; !st.IsSuccess() {
		t.Fatalf("PreBind: %v", st)
	}

	// A cancelled binding cycle ends PreBind's wait at once.
	state4, st := cycle(p2)
	if !st.IsSuccess() {
		t.Fatalf("fourth pod: %v", st)
	}
	h.RunReservePluginsReserve(ctx, state4, p2, "b")
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	start := time.Now()
	if st := h.RunPreBindPlugins(cctx, state4, p2, "b"); st.IsSuccess() || !strings.Contains(st.Message(), "context canceled") {
		t.Fatalf("cancelled PreBind: %v", st)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("cancelled PreBind took %v", time.Since(start))
	}
}
