package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// localVolume creates a local PersistentVolume reachable only from node.
func localVolume(t *testing.T, cs kubernetes.Interface, name, class, node string) {
	t.Helper()
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:              class,
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create volume %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func claimPod(name, claim string) *v1.Pod {
	p := pod(name, "100m")
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	return p
}

// TestWaitForFirstConsumerVolume: a pod whose claim waits for its first
// consumer lands on the node its only fitting local volume allows, and the
// controller-manager's binder binds the claim to that volume; a pod with
// no volume to bind is unschedulable until one appears.
func TestWaitForFirstConsumerVolume(t *testing.T) {
	cs := srv.Clientset(t)
	ctx := context.Background()
	createNodes(t, cs,
		nodeSpec{name: "vb-a", cpu: "8"},
		nodeSpec{name: "vb-b", cpu: "8"},
	)
	ns := namespace(t, cs)
	className := "local-" + ns
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: className},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &mode,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create storage class: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.StorageV1().StorageClasses().Delete(context.Background(), className, metav1.DeleteOptions{})
	})
	pvName := "vb-pv-b-" + ns
	localVolume(t, cs, pvName, className, "vb-b")
	for _, name := range []string{"data", "data2"} {
		if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &v1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1.PersistentVolumeClaimSpec{
				StorageClassName: &className,
				AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create claim %s: %v", name, err)
		}
	}

	createPod(t, cs, ns, claimPod("consumer", "data"))
	if node := waitScheduled(t, cs, ns, "consumer", 20*time.Second); node != "vb-b" {
		t.Fatalf("consumer landed on %s, want vb-b (its volume's node)", node)
	}
	var claim *v1.PersistentVolumeClaim
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		claim, err = cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		return err == nil && claim.Status.Phase == v1.ClaimBound, nil
	}); err != nil {
		t.Fatalf("claim not bound by the controller-manager: %+v", claim)
	}
	if claim.Spec.VolumeName != pvName {
		t.Errorf("claim bound to %q, want %q", claim.Spec.VolumeName, pvName)
	}

	// The only volume is taken: the second claim's pod cannot schedule
	// until a volume appears, on vb-a, where it then lands.
	createPod(t, cs, ns, claimPod("second", "data2"))
	msg := waitFailedScheduling(t, cs, ns, "second", 20*time.Second)
	if !strings.Contains(msg, "didn't find available persistent volumes to bind") {
		t.Errorf("FailedScheduling message %q lacks the VolumeBinding reason", msg)
	}
	localVolume(t, cs, "vb-pv-a-"+ns, className, "vb-a")
	if node := waitScheduled(t, cs, ns, "second", 30*time.Second); node != "vb-a" {
		t.Fatalf("second landed on %s, want vb-a", node)
	}
}
