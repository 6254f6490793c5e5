package controllermanager_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

const storageNS = "storage-e2e"

func makePV(t *testing.T, cs kubernetes.Interface, name, class, size string, policy corev1.PersistentVolumeReclaimPolicy, node string) {
	t.Helper()
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              class,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: policy,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + name}},
		},
	}
	if node != "" {
		pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/" + name}}
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}}}
	}
	if _, err := cs.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pv %s: %v", name, err)
	}
}

func makePVC(t *testing.T, cs kubernetes.Interface, name, class, size string, annotations map[string]string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: storageNS, Annotations: annotations},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(storageNS).Create(context.Background(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pvc %s: %v", name, err)
	}
}

// waitBound waits until claim is Bound to volume, both ways.
func waitBound(t *testing.T, cs kubernetes.Interface, claim, volume string) {
	t.Helper()
	testwait.For(t, nodesTestTimeout, "claim "+claim+" bound to "+volume, func(ctx context.Context) (bool, error) {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(storageNS).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, volume, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName == volume &&
			pv.Status.Phase == corev1.VolumeBound && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.UID == pvc.UID, nil
	})
}

func volumePhase(ctx context.Context, cs kubernetes.Interface, name string) (corev1.PersistentVolumePhase, error) {
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return pv.Status.Phase, nil
}

func testPersistentVolume(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	makeNamespace(t, cs, storageNS)

	// Static binding picks the smallest volume of the class that fits.
	makePV(t, cs, "e2e-pv-small", "e2e-manual", "1Gi", corev1.PersistentVolumeReclaimRetain, "")
	makePV(t, cs, "e2e-pv-big", "e2e-manual", "5Gi", corev1.PersistentVolumeReclaimRetain, "")
	makePV(t, cs, "e2e-pv-huge", "e2e-manual", "50Gi", corev1.PersistentVolumeReclaimDelete, "")
	makePV(t, cs, "e2e-pv-other", "e2e-other", "2Gi", corev1.PersistentVolumeReclaimRetain, "")
	makePVC(t, cs, "claim", "e2e-manual", "2Gi", nil)
	waitBound(t, cs, "claim", "e2e-pv-big")
	pvc, err := cs.CoreV1().PersistentVolumeClaims(storageNS).Get(ctx, "claim", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pvc.Status.Capacity[corev1.ResourceStorage]; got.String() != "5Gi" {
		t.Errorf("claim capacity %s, want the volume's 5Gi", got.String())
	}
	makePVC(t, cs, "claim-huge", "e2e-manual", "20Gi", nil)
	waitBound(t, cs, "claim-huge", "e2e-pv-huge")
	for _, name := range []string{"e2e-pv-small", "e2e-pv-other"} {
		if phase, err := volumePhase(ctx, cs, name); err != nil || phase != corev1.VolumeAvailable {
			t.Errorf("volume %s phase %q (%v), want Available", name, phase, err)
		}
	}

	// WaitForFirstConsumer: nothing binds until a node is selected.
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "e2e-wffc"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	makeNode(t, cs, "pv-node-a", map[string]string{corev1.LabelHostname: "pv-node-a"})
	makeNode(t, cs, "pv-node-b", map[string]string{corev1.LabelHostname: "pv-node-b"})
	makePV(t, cs, "e2e-pv-local-a", "e2e-wffc", "1Gi", corev1.PersistentVolumeReclaimRetain, "pv-node-a")
	makePV(t, cs, "e2e-pv-local-b", "e2e-wffc", "1Gi", corev1.PersistentVolumeReclaimRetain, "pv-node-b")
	makePVC(t, cs, "claim-local", "e2e-wffc", "1Gi", nil)
	time.Sleep(1500 * time.Millisecond)
	pvc, err = cs.CoreV1().PersistentVolumeClaims(storageNS).Get(ctx, "claim-local", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Spec.VolumeName != "" || pvc.Status.Phase != corev1.ClaimPending {
		t.Fatalf("WaitForFirstConsumer claim bound before a node was selected: %q %s", pvc.Spec.VolumeName, pvc.Status.Phase)
	}
	pvc.Annotations = map[string]string{"volume.kubernetes.io/selected-node": "pv-node-b"}
	if _, err := cs.CoreV1().PersistentVolumeClaims(storageNS).Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, cs, "claim-local", "e2e-pv-local-b")

	// PVC protection: a claim a pod uses outlives its deletion until the
	// pod goes.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: storageNS},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes:    []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}}},
		},
	}
	if _, err := cs.CoreV1().Pods(storageNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claim", "claim-huge"} {
		if err := cs.CoreV1().PersistentVolumeClaims(storageNS).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Reclaim policies: Delete removes the volume, Retain keeps it
	// Released.
	testwait.For(t, nodesTestTimeout, "volume e2e-pv-huge (reclaim Delete) deleted", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().PersistentVolumes().Get(ctx, "e2e-pv-huge", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	time.Sleep(time.Second)
	pvc, err = cs.CoreV1().PersistentVolumeClaims(storageNS).Get(ctx, "claim", metav1.GetOptions{})
	if err != nil || pvc.DeletionTimestamp == nil {
		t.Fatalf("claim used by a pod: want it kept, terminating; got %v, %v", pvc, err)
	}
	if err := cs.CoreV1().Pods(storageNS).Delete(ctx, "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, nodesTestTimeout, "claim gone once its pod is", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().PersistentVolumeClaims(storageNS).Get(ctx, "claim", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	testwait.For(t, nodesTestTimeout, "volume e2e-pv-big (reclaim Retain) Released", func(ctx context.Context) (bool, error) {
		phase, err := volumePhase(ctx, cs, "e2e-pv-big")
		return phase == corev1.VolumeReleased, err
	})

	// Ephemeral volumes get a claim owned by their pod.
	eph := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "eph", Namespace: storageNS},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
					StorageClassName: ptr.To("e2e-manual"),
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				}},
			}}}},
		},
	}
	created, err := cs.CoreV1().Pods(storageNS).Create(ctx, eph, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, nodesTestTimeout, "claim eph-scratch owned by pod eph", func(ctx context.Context) (bool, error) {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(storageNS).Get(ctx, "eph-scratch", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ref := metav1.GetControllerOf(pvc)
		return ref != nil && ref.Kind == "Pod" && ref.UID == created.UID, nil
	})
	waitBound(t, cs, "eph-scratch", "e2e-pv-small")
}
