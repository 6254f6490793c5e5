package volumezone

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func pv(name string, labels map[string]string) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func pvc(name, volume, class string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: volume, StorageClassName: &class}}
}

func withClaim(claim string) *v1.Pod {
	p := plugintest.Pod("p", "", "")
	p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	return p
}

func TestFilter(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	objs := []runtime.Object{
		pv("pv-z1", map[string]string{v1.LabelTopologyZone: "z1"}),
		pv("pv-z1z2", map[string]string{v1.LabelTopologyZone: "z1__z2"}),
		pv("pv-none", nil),
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "late"}, VolumeBindingMode: &wffc},
		pvc("c-z1", "pv-z1", ""), pvc("c-z1z2", "pv-z1z2", ""), pvc("c-none", "pv-none", ""), pvc("c-late", "", "late"),
	}
	nodes := []*v1.Node{
		plugintest.Node("n1", "4", v1.LabelTopologyZone, "z1"),
		plugintest.Node("n2", "4", v1.LabelTopologyZone, "z2"),
		plugintest.Node("bare", "4"),
	}
	tests := []struct {
		name      string
		claim     string
		preFilter bool
		fits      map[string]bool
	}{
		{name: "zonal volume", claim: "c-z1", fits: map[string]bool{"n1": true, "n2": false, "bare": true}},
		{name: "volume in two zones", claim: "c-z1z2", fits: map[string]bool{"n1": true, "n2": true, "bare": true}},
		{name: "volume without zone", claim: "c-none", fits: map[string]bool{"n1": true, "n2": true, "bare": true}},
		{name: "unbound WaitForFirstConsumer claim", claim: "c-late", fits: map[string]bool{"n1": true, "n2": true, "bare": true}},
		{name: "missing claim", claim: "nope", preFilter: true},
	}
	h := plugintest.NewWithObjects(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, nil, objs)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pre := h.Filter(t, withClaim(tt.claim))
			if tt.preFilter {
				if pre.IsSuccess() {
					t.Fatal("PreFilter passed")
				}
				return
			}
			for n, fits := range tt.fits {
				if got[n].IsSuccess() != fits {
					t.Errorf("node %s: %v, want fits=%v", n, got[n], fits)
				}
				if !fits && got[n].Message() != ErrReasonConflict {
					t.Errorf("node %s reason %q", n, got[n].Message())
				}
			}
		})
	}
}
