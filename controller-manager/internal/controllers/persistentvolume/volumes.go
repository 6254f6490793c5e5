package persistentvolume

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	volumehelpers "k8s.io/component-helpers/storage/volume"
)

// syncVolume keeps a volume's phase true to its claim and reclaims it once
// its claim is gone.
func (c *Controller) syncVolume(ctx context.Context, name string) error {
	pv, err := c.volumes.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get volume %s: %w", name, err)
	}
	ref := pv.Spec.ClaimRef
	if ref == nil || ref.UID == "" {
		// Free, or pre-bound by its user to a claim yet to come.
		return c.setVolumePhase(ctx, pv, corev1.VolumeAvailable, "")
	}
	claim, err := c.claims.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get claim %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if claim != nil && claim.UID != ref.UID {
		claim = nil // deleted and made again: not the claim this volume served
	}
	if claim == nil {
		// The cache may lag a claim just created; ask the apiserver before
		// releasing a volume for good.
		live, err := c.client.CoreV1().PersistentVolumeClaims(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil && live.UID == ref.UID {
			return nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("get claim %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		return c.release(ctx, pv)
	}
	switch claim.Spec.VolumeName {
	case "":
		// Binding in progress: the claim's sync finishes it.
		c.claimQ.Add(claim.Namespace + "/" + claim.Name)
		return nil
	case pv.Name:
		return c.setVolumePhase(ctx, pv, corev1.VolumeBound, "")
	}
	// The claim went to another volume. A binding this controller made
	// is undone; one the user made is left for them.
	if pv.Annotations[volumehelpers.AnnBoundByController] != "yes" {
		return nil
	}
	pv = pv.DeepCopy()
	pv.Spec.ClaimRef = nil
	delete(pv.Annotations, volumehelpers.AnnBoundByController)
	updated, err := c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("unbind volume %s: %w", pv.Name, err)
	}
	return c.setVolumePhase(ctx, updated, corev1.VolumeAvailable, "")
}

// release marks the volume Released and applies its reclaim policy:
// Retain keeps it for an administrator; Delete deletes the PersistentVolume
// unless an external provisioner made it (that provisioner deletes the
// storage and the object); Recycle is not supported.
//
// A volume being deleted is only marked Released: the pv-protection
// controller holds it while it is Bound, so it would otherwise stay
// Terminating for good.
func (c *Controller) release(ctx context.Context, pv *corev1.PersistentVolume) error {
	if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
		if err := c.setVolumePhase(ctx, pv, corev1.VolumeReleased, ""); err != nil {
			return err
		}
	}
	if pv.DeletionTimestamp != nil {
		return nil
	}
	log := logr.FromContextOrDiscard(ctx)
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimDelete:
		if p := pv.Annotations[volumehelpers.AnnDynamicallyProvisioned]; p != "" {
			return nil // the provisioner that made it deletes it
		}
		err := c.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(pv.UID))})
		if err != nil && !apierrors.IsNotFound(err) {
			c.recorder.Eventf(pv, corev1.EventTypeWarning, reasonVolumeFailedDelete, "Deleting the released volume failed: %v", err)
			return fmt.Errorf("delete released volume %s: %w", pv.Name, err)
		}
		log.Info("Deleted released volume", "volume", pv.Name)
	case corev1.PersistentVolumeReclaimRecycle:
		if pv.Status.Phase != corev1.VolumeFailed {
			c.recorder.Event(pv, corev1.EventTypeWarning, reasonVolumeFailedRecycle, "Recycle reclaim policy is not supported; use Retain or Delete")
			return c.setVolumePhase(ctx, pv, corev1.VolumeFailed, "Recycle reclaim policy is not supported")
		}
	}
	return nil
}

func (c *Controller) setVolumePhase(ctx context.Context, pv *corev1.PersistentVolume, phase corev1.PersistentVolumePhase, message string) error {
	if pv.Status.Phase == phase && pv.Status.Message == message {
		return nil
	}
	pv = pv.DeepCopy()
	pv.Status.Phase, pv.Status.Message = phase, message
	now := metav1.Now()
	pv.Status.LastPhaseTransitionTime = &now
	if _, err := c.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("set phase %s of volume %s: %w", phase, pv.Name, err)
	}
	return nil
}
