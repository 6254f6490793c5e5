package nodevolumelimits

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

const driver = "csi.example.com"

func boundClaim(i int) []runtime.Object {
	name := fmt.Sprintf("c%d", i)
	return []runtime.Object{
		&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name}, Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "h-" + name}}}},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-" + name}},
	}
}

func withClaims(p *v1.Pod, claims ...string) *v1.Pod {
	for _, c := range claims {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return p
}

func TestFilter(t *testing.T) {
	var objs []runtime.Object
	for i := range 4 {
		objs = append(objs, boundClaim(i)...)
	}
	objs = append(objs,
		&storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: driver, NodeID: "limited", Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](2)}}}}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "csi"}, Provisioner: driver},
		&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "unbound", Namespace: "default"}, Spec: v1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("csi")}},
	)
	nodes := []*v1.Node{plugintest.Node("limited", "4"), plugintest.Node("free", "4")}
	existing := []*v1.Pod{withClaims(plugintest.Pod("e", "", "limited"), "c0")}
	tests := []struct {
		name   string
		claims []string
		fits   bool // on "limited"
	}{
		{name: "one more volume fits", claims: []string{"c1"}, fits: true},
		{name: "two more exceed", claims: []string{"c1", "c2"}, fits: false},
		{name: "shared volume counts once", claims: []string{"c0", "c1"}, fits: true},
		{name: "unbound claim counts for its class's driver", claims: []string{"c1", "unbound"}, fits: false},
	}
	h := plugintest.NewWithObjects(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, existing, objs)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := h.Filter(t, withClaims(plugintest.Pod("p", "", ""), tt.claims...))
			if got["limited"].IsSuccess() != tt.fits {
				t.Errorf("limited: %v, want fits=%v", got["limited"], tt.fits)
			}
			if !tt.fits && got["limited"].Message() != ErrReasonMaxVolumeCountExceeded {
				t.Errorf("reason %q", got["limited"].Message())
			}
			if !got["free"].IsSuccess() {
				t.Errorf("node without CSINode: %v", got["free"])
			}
		})
	}
}
