package persistentvolume

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	volumehelpers "k8s.io/component-helpers/storage/volume"
)

// Event reasons, as upstream's.
const (
	reasonWaitForFirstConsumer = "WaitForFirstConsumer"
	reasonFailedBinding        = "FailedBinding"
	reasonExternalProvisioning = "ExternalProvisioning"
	reasonClaimLost            = "ClaimLost"
	reasonClaimMisbound        = "ClaimMisbound"
	reasonVolumeFailedDelete   = "VolumeFailedDelete"
	reasonVolumeFailedRecycle  = "VolumeFailedRecycle"
	reasonVolumeMismatch       = "VolumeMismatch"
)

// syncClaim binds an unbound claim or checks a bound one.
func (c *Controller) syncClaim(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	claim, err := c.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get claim %s: %w", key, err)
	}
	if claim.DeletionTimestamp != nil {
		return nil
	}
	if claim.Spec.VolumeName == "" {
		return c.bindUnbound(ctx, claim)
	}
	return c.checkBound(ctx, claim)
}

// bindUnbound finds the claim a volume and binds the two, or says in an
// Event why it waits.
func (c *Controller) bindUnbound(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	className := volumehelpers.GetPersistentVolumeClaimClass(claim)
	var class *storagev1.StorageClass
	if className != "" {
		var err error
		class, err = c.classes.Get(className)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("get storageclass %s: %w", className, err)
		}
	}
	delay := class != nil && class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
	var node *corev1.Node
	if selected := claim.Annotations[volumehelpers.AnnSelectedNode]; delay && selected != "" {
		n, err := c.nodes.Get(selected)
		if err != nil {
			return fmt.Errorf("selected node %s of claim %s/%s: %w", selected, claim.Namespace, claim.Name, err)
		}
		node = n
	}
	all, err := c.volumes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list volumes: %w", err)
	}
	var candidates []*corev1.PersistentVolume
	for _, pv := range all {
		if volumehelpers.IsVolumeBoundToClaim(pv, claim) || volumehelpers.CheckAccessModes(claim, pv) {
			candidates = append(candidates, pv)
		}
	}
	pv, err := volumehelpers.FindMatchingVolume(claim, candidates, node, nil, delay, true)
	if err != nil {
		c.recorder.Eventf(claim, corev1.EventTypeWarning, reasonFailedBinding, "Cannot bind: %v", err)
		return nil
	}
	if pv == nil {
		return c.noVolume(ctx, claim, class, delay && node == nil)
	}
	if err := satisfies(pv, claim); err != nil {
		// Only a volume pre-bound to the claim can get here unsuited.
		c.recorder.Eventf(claim, corev1.EventTypeWarning, reasonVolumeMismatch, "Cannot bind to requested volume %q: %v", pv.Name, err)
		return c.setClaimPhase(ctx, claim, corev1.ClaimPending, nil)
	}
	return c.bind(ctx, pv, claim)
}

// satisfies checks what FindMatchingVolume does not for a pre-bound pair:
// class, size, access modes and volume mode.
func satisfies(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	if pc, cc := volumehelpers.GetPersistentVolumeClass(pv), volumehelpers.GetPersistentVolumeClaimClass(claim); pc != cc {
		return fmt.Errorf("storageClassName does not match")
	}
	want := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if have := pv.Spec.Capacity[corev1.ResourceStorage]; have.Cmp(want) < 0 {
		return fmt.Errorf("requested PV is too small")
	}
	if !volumehelpers.CheckAccessModes(claim, pv) {
		return fmt.Errorf("incompatible accessMode")
	}
	if volumehelpers.CheckVolumeModeMismatches(&claim.Spec, &pv.Spec) {
		return fmt.Errorf("incompatible volumeMode")
	}
	return nil
}

// noVolume records why the claim stays Pending and, under a class with a
// provisioner, hands it to that provisioner through the annotations
// external provisioners watch for.
func (c *Controller) noVolume(ctx context.Context, claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, waiting bool) error {
	if waiting {
		c.recorder.Event(claim, corev1.EventTypeNormal, reasonWaitForFirstConsumer, "waiting for first consumer to be created before binding")
		return c.setClaimPhase(ctx, claim, corev1.ClaimPending, nil)
	}
	if class != nil && class.Provisioner != "" && class.Provisioner != volumehelpers.NotSupportedProvisioner {
		if claim.Annotations[volumehelpers.AnnStorageProvisioner] != class.Provisioner {
			claim = claim.DeepCopy()
			metav1.SetMetaDataAnnotation(&claim.ObjectMeta, volumehelpers.AnnStorageProvisioner, class.Provisioner)
			metav1.SetMetaDataAnnotation(&claim.ObjectMeta, volumehelpers.AnnBetaStorageProvisioner, class.Provisioner)
			updated, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("annotate claim %s/%s for provisioner %s: %w", claim.Namespace, claim.Name, class.Provisioner, err)
			}
			claim = updated
		}
		c.recorder.Eventf(claim, corev1.EventTypeNormal, reasonExternalProvisioning,
			"Waiting for a volume to be created either by the external provisioner '%s' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.", class.Provisioner)
		return c.setClaimPhase(ctx, claim, corev1.ClaimPending, nil)
	}
	msg := "no persistent volumes available for this claim and no storage class is set"
	if class != nil {
		msg = fmt.Sprintf("no persistent volumes available for this claim and storage class %q has no provisioner", class.Name)
	} else if volumehelpers.GetPersistentVolumeClaimClass(claim) != "" {
		msg = fmt.Sprintf("storageclass.storage.k8s.io %q not found", volumehelpers.GetPersistentVolumeClaimClass(claim))
	}
	c.recorder.Event(claim, corev1.EventTypeNormal, reasonFailedBinding, msg)
	return c.setClaimPhase(ctx, claim, corev1.ClaimPending, nil)
}

// bind points the volume at the claim, then the claim at the volume, then
// marks both Bound; each step is safe to redo after a failure.
func (c *Controller) bind(ctx context.Context, pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim) error {
	bound, dirty, err := volumehelpers.GetBindVolumeToClaim(pv, claim)
	if err != nil {
		return fmt.Errorf("bind volume %s: %w", pv.Name, err)
	}
	if dirty {
		bound, err = c.client.CoreV1().PersistentVolumes().Update(ctx, bound, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("bind volume %s to claim %s/%s: %w", pv.Name, claim.Namespace, claim.Name, err)
		}
	}
	if bound.Status.Phase != corev1.VolumeBound {
		bound = bound.DeepCopy()
		bound.Status.Phase = corev1.VolumeBound
		bound.Status.Message, bound.Status.Reason = "", ""
		if _, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, bound, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("mark volume %s bound: %w", pv.Name, err)
		}
	}
	if claim.Spec.VolumeName != pv.Name || claim.Annotations[volumehelpers.AnnBindCompleted] != "yes" {
		claim = claim.DeepCopy()
		if claim.Spec.VolumeName != pv.Name {
			claim.Spec.VolumeName = pv.Name
			metav1.SetMetaDataAnnotation(&claim.ObjectMeta, volumehelpers.AnnBoundByController, "yes")
		}
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, volumehelpers.AnnBindCompleted, "yes")
		claim, err = c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, claim, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("bind claim %s to volume %s: %w", claim.Namespace+"/"+claim.Name, pv.Name, err)
		}
	}
	if err := c.setClaimPhase(ctx, claim, corev1.ClaimBound, pv); err != nil {
		return err
	}
	logr.FromContextOrDiscard(ctx).Info("Bound claim", "claim", claim.Namespace+"/"+claim.Name, "volume", pv.Name)
	return nil
}

// checkBound keeps a bound claim's phase true to its volume.
func (c *Controller) checkBound(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	pv, err := c.volumes.Get(claim.Spec.VolumeName)
	if apierrors.IsNotFound(err) {
		if claim.Status.Phase != corev1.ClaimLost {
			c.recorder.Event(claim, corev1.EventTypeWarning, reasonClaimLost, "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
		}
		return c.setClaimPhase(ctx, claim, corev1.ClaimLost, nil)
	}
	if err != nil {
		return fmt.Errorf("get volume %s: %w", claim.Spec.VolumeName, err)
	}
	switch {
	case volumehelpers.IsVolumeBoundToClaim(pv, claim):
		// A binding interrupted half way: finish it.
		return c.bind(ctx, pv, claim)
	case pv.Spec.ClaimRef == nil:
		// A claim its user pre-bound to this free volume.
		if err := satisfies(pv, claim); err != nil {
			c.recorder.Eventf(claim, corev1.EventTypeWarning, reasonVolumeMismatch, "Cannot bind to requested volume %q: %v", pv.Name, err)
			return c.setClaimPhase(ctx, claim, corev1.ClaimPending, nil)
		}
		return c.bind(ctx, pv, claim)
	default:
		if claim.Status.Phase != corev1.ClaimLost {
			c.recorder.Event(claim, corev1.EventTypeWarning, reasonClaimMisbound, "Two claims are bound to the same volume, this one is bound incorrectly")
		}
		return c.setClaimPhase(ctx, claim, corev1.ClaimLost, nil)
	}
}

// setClaimPhase writes the claim's phase and, once Bound, the volume's
// access modes and capacity.
func (c *Controller) setClaimPhase(ctx context.Context, claim *corev1.PersistentVolumeClaim, phase corev1.PersistentVolumeClaimPhase, pv *corev1.PersistentVolume) error {
	want := claim.Status.DeepCopy()
	want.Phase = phase
	if pv != nil {
		want.AccessModes = pv.Spec.AccessModes
		want.Capacity = pv.Spec.Capacity
	}
	if phase != corev1.ClaimBound {
		want.AccessModes, want.Capacity = nil, nil
	}
	if want.Phase == claim.Status.Phase && slices.Equal(want.AccessModes, claim.Status.AccessModes) && equalCapacity(want.Capacity, claim.Status.Capacity) {
		return nil
	}
	claim = claim.DeepCopy()
	claim.Status = *want
	if _, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("set phase %s of claim %s/%s: %w", phase, claim.Namespace, claim.Name, err)
	}
	return nil
}

func equalCapacity(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
