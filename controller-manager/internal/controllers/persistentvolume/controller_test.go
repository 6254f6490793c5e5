package persistentvolume

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

func pv(name, class, size string, modifiers ...func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
	v := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              class,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable},
	}
	for _, m := range modifiers {
		m(v)
	}
	return v
}

func pvc(name, class, size string, modifiers ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID("uid-ns-" + name)},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
	for _, m := range modifiers {
		m(c)
	}
	return c
}

func start(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset, *record.FakeRecorder, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	recorder := record.NewFakeRecorder(20)
	c, err := New(Options{Client: client, Claims: factory.Core().V1().PersistentVolumeClaims(), Volumes: factory.Core().V1().PersistentVolumes(),
		Classes: factory.Storage().V1().StorageClasses(), Nodes: factory.Core().V1().Nodes(), Recorder: recorder, SyncPeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return c, client, recorder, ctx
}

func TestBindClaim(t *testing.T) {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	onNode := func(node string) func(*corev1.PersistentVolume) {
		return func(v *corev1.PersistentVolume) {
			v.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}}
		}
	}
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
	}
	selected := func(node string) func(*corev1.PersistentVolumeClaim) {
		return func(c *corev1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{"volume.kubernetes.io/selected-node": node}
		}
	}
	tests := []struct {
		name       string
		objs       []runtime.Object
		wantVolume string
		wantPhase  corev1.PersistentVolumeClaimPhase
	}{
		{"smallest fitting volume", []runtime.Object{pv("small", "c", "1Gi"), pv("mid", "c", "5Gi"), pv("big", "c", "10Gi"), pvc("claim", "c", "2Gi")}, "mid", corev1.ClaimBound},
		{"class must match", []runtime.Object{pv("other", "d", "5Gi"), pvc("claim", "c", "2Gi")}, "", corev1.ClaimPending},
		{"access modes must be offered", []runtime.Object{pv("rwo", "c", "5Gi"), pvc("claim", "c", "2Gi", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		})}, "", corev1.ClaimPending},
		{"selector must match", []runtime.Object{pv("plain", "c", "5Gi"), pv("fast", "c", "5Gi", func(v *corev1.PersistentVolume) { v.Labels = map[string]string{"speed": "fast"} }),
			pvc("claim", "c", "2Gi", func(c *corev1.PersistentVolumeClaim) {
				c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"speed": "fast"}}
			})}, "fast", corev1.ClaimBound},
		{"pre-bound volume wins", []runtime.Object{pv("small", "c", "3Gi"), pv("reserved", "c", "50Gi", func(v *corev1.PersistentVolume) {
			v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "claim"}
		}), pvc("claim", "c", "2Gi")}, "reserved", corev1.ClaimBound},
		{"bound volume is not taken", []runtime.Object{pv("taken", "c", "5Gi", func(v *corev1.PersistentVolume) {
			v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "someone", UID: "x"}
			v.Status.Phase = corev1.VolumeBound
		}), pvc("claim", "c", "2Gi")}, "", corev1.ClaimPending},
		{"released volume is not taken", []runtime.Object{pv("released", "c", "5Gi", func(v *corev1.PersistentVolume) { v.Status.Phase = corev1.VolumeReleased }), pvc("claim", "c", "2Gi")}, "", corev1.ClaimPending},
		{"pre-bound volume of another class is refused", []runtime.Object{pv("reserved", "d", "50Gi", func(v *corev1.PersistentVolume) {
			v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "claim"}
		}), pvc("claim", "c", "2Gi")}, "", corev1.ClaimPending},
		{"claim pre-bound to a free volume binds", []runtime.Object{pv("chosen", "c", "5Gi"), pv("other", "c", "3Gi"),
			pvc("claim", "c", "2Gi", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "chosen" })}, "chosen", corev1.ClaimBound},
		{"claim pre-bound to a too small volume waits", []runtime.Object{pv("tiny", "c", "1Gi"),
			pvc("claim", "c", "2Gi", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "tiny" })}, "tiny", corev1.ClaimPending},
		{"WaitForFirstConsumer waits", []runtime.Object{&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
			pv("a", "local", "5Gi", onNode("n1")), pvc("claim", "local", "1Gi")}, "", corev1.ClaimPending},
		{"WaitForFirstConsumer binds on the selected node", []runtime.Object{&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
			node("n1"), node("n2"), pv("a", "local", "5Gi", onNode("n1")), pv("b", "local", "5Gi", onNode("n2")), pvc("claim", "local", "1Gi", selected("n2"))}, "b", corev1.ClaimBound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, client, _, ctx := start(t, tt.objs...)
			if err := c.syncClaim(ctx, "ns/claim"); err != nil {
				t.Fatal(err)
			}
			claim, err := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "claim", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if claim.Spec.VolumeName != tt.wantVolume || claim.Status.Phase != tt.wantPhase {
				t.Errorf("claim volume %q phase %q, want %q %q", claim.Spec.VolumeName, claim.Status.Phase, tt.wantVolume, tt.wantPhase)
			}
			if tt.wantVolume == "" || tt.wantPhase != corev1.ClaimBound {
				return
			}
			vol, _ := client.CoreV1().PersistentVolumes().Get(ctx, tt.wantVolume, metav1.GetOptions{})
			if vol.Spec.ClaimRef == nil || vol.Spec.ClaimRef.UID != claim.UID || vol.Status.Phase != corev1.VolumeBound {
				t.Errorf("volume claimRef %+v phase %s", vol.Spec.ClaimRef, vol.Status.Phase)
			}
			if claim.Status.Capacity.Storage().Cmp(*vol.Spec.Capacity.Storage()) != 0 {
				t.Errorf("claim capacity %v, want the volume's %v", claim.Status.Capacity, vol.Spec.Capacity)
			}
		})
	}
}

func TestSyncVolume(t *testing.T) {
	boundTo := func(uid string) func(*corev1.PersistentVolume) {
		return func(v *corev1.PersistentVolume) {
			v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "claim", UID: "uid-ns-claim"}
			if uid != "" {
				v.Spec.ClaimRef.UID = k8stypes.UID(uid)
			}
			v.Status.Phase = corev1.VolumeBound
		}
	}
	policy := func(p corev1.PersistentVolumeReclaimPolicy) func(*corev1.PersistentVolume) {
		return func(v *corev1.PersistentVolume) { v.Spec.PersistentVolumeReclaimPolicy = p }
	}
	tests := []struct {
		name        string
		objs        []runtime.Object
		wantPhase   corev1.PersistentVolumePhase
		wantDeleted bool
	}{
		{"free volume is Available", []runtime.Object{pv("v", "c", "1Gi", func(v *corev1.PersistentVolume) { v.Status.Phase = "" })}, corev1.VolumeAvailable, false},
		{"claim gone, Retain: Released", []runtime.Object{pv("v", "c", "1Gi", boundTo(""))}, corev1.VolumeReleased, false},
		{"claim gone, Delete: deleted", []runtime.Object{pv("v", "c", "1Gi", boundTo(""), policy(corev1.PersistentVolumeReclaimDelete))}, "", true},
		{"claim gone, Delete, externally provisioned: left to the provisioner", []runtime.Object{pv("v", "c", "1Gi", boundTo(""), policy(corev1.PersistentVolumeReclaimDelete),
			func(v *corev1.PersistentVolume) {
				v.Annotations = map[string]string{"pv.kubernetes.io/provisioned-by": "csi.example"}
			})}, corev1.VolumeReleased, false},
		{"claim gone, Recycle: Failed", []runtime.Object{pv("v", "c", "1Gi", boundTo(""), policy(corev1.PersistentVolumeReclaimRecycle))}, corev1.VolumeFailed, false},
		{"claim recreated with a new UID: Released", []runtime.Object{pv("v", "c", "1Gi", boundTo("old-uid")), pvc("claim", "c", "1Gi")}, corev1.VolumeReleased, false},
		{"claim gone, volume being deleted: Released, for pv-protection to let it go", []runtime.Object{pv("v", "c", "1Gi", boundTo(""), policy(corev1.PersistentVolumeReclaimDelete),
			func(v *corev1.PersistentVolume) {
				v.DeletionTimestamp = &metav1.Time{Time: time.Now()}
				v.Finalizers = []string{"kubernetes.io/pv-protection"}
			})}, corev1.VolumeReleased, false},
		{"claim bound here: Bound", []runtime.Object{pv("v", "c", "1Gi", boundTo(""), func(v *corev1.PersistentVolume) { v.Status.Phase = corev1.VolumeAvailable }),
			pvc("claim", "c", "1Gi", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "v" })}, corev1.VolumeBound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, client, _, ctx := start(t, tt.objs...)
			if err := c.syncVolume(ctx, "v"); err != nil {
				t.Fatal(err)
			}
			got, err := client.CoreV1().PersistentVolumes().Get(ctx, "v", metav1.GetOptions{})
			if tt.wantDeleted {
				if !apierrors.IsNotFound(err) {
					t.Errorf("volume not deleted: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != tt.wantPhase {
				t.Errorf("phase %s, want %s", got.Status.Phase, tt.wantPhase)
			}
		})
	}
}

func TestBoundClaimLosesVolume(t *testing.T) {
	claim := pvc("claim", "c", "1Gi", func(c *corev1.PersistentVolumeClaim) {
		c.Spec.VolumeName = "gone"
		c.Status.Phase = corev1.ClaimBound
	})
	c, client, recorder, ctx := start(t, claim)
	if err := c.syncClaim(ctx, "ns/claim"); err != nil {
		t.Fatal(err)
	}
	got, _ := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "claim", metav1.GetOptions{})
	if got.Status.Phase != corev1.ClaimLost {
		t.Errorf("phase %s, want Lost", got.Status.Phase)
	}
	if len(recorder.Events) == 0 {
		t.Error("no ClaimLost event")
	}
}

// TestClaimDeletedMidBinding: a claim deleted after the volume's side of the
// binding was written but before its own (its volumeName still empty)
// queues that volume, whose sync then releases it (TestSyncVolume).
func TestClaimDeletedMidBinding(t *testing.T) {
	claim := pvc("claim", "c", "1Gi")
	volume := pv("v", "c", "1Gi", func(v *corev1.PersistentVolume) {
		v.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "claim", UID: claim.UID}
		v.Status.Phase = corev1.VolumeBound
	})
	// The informers are not started: the volumes are in the lister's
	// cache, and no event queues anything but the deletion.
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	c, err := New(Options{Client: fake.NewClientset(), Claims: factory.Core().V1().PersistentVolumeClaims(), Volumes: factory.Core().V1().PersistentVolumes(),
		Classes: factory.Storage().V1().StorageClasses(), Nodes: factory.Core().V1().Nodes(), Recorder: record.NewFakeRecorder(1), SyncPeriod: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*corev1.PersistentVolume{volume, pv("other", "c", "1Gi")} {
		if err := factory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(v); err != nil {
			t.Fatal(err)
		}
	}
	c.claimDeleted(claim)
	if got := c.volumeQ.Len(); got != 1 {
		t.Errorf("claim deletion queued %d volumes, want 1 (v)", got)
	}
}
