// Package volumerestrictions is the VolumeRestrictions plugin: a pod may
// not share a node with another pod mounting the same exclusive disk (GCE
// PD, AWS EBS, RBD, iSCSI, as upstream checks them), nor use a
// ReadWriteOncePod claim another pod already uses.
package volumerestrictions

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "VolumeRestrictions"

// Upstream's reasons.
const (
	ErrReasonDiskConflict             = "node(s) had no available disk"
	ErrReasonReadWriteOncePodConflict = "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

// Plugin implements PreFilter and Filter.
type Plugin struct {
	h         fwk.Handle
	pvcLister corelisters.PersistentVolumeClaimLister
}

// New is the plugin's factory.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	p := &Plugin{h: h}
	if f := h.SharedInformerFactory(); f != nil {
		p.pvcLister = f.Core().V1().PersistentVolumeClaims().Lister()
	}
	return p, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

func needsCheck(v *v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// PreFilter implements fwk.PreFilterPlugin: pods without exclusive disks
// or claims skip the plugin; a ReadWriteOncePod claim in use elsewhere
// rejects the pod outright.
func (p *Plugin) PreFilter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	disks, claims := false, false
	for i := range pod.Spec.Volumes {
		disks = disks || needsCheck(&pod.Spec.Volumes[i])
		claims = claims || pod.Spec.Volumes[i].PersistentVolumeClaim != nil
	}
	if !disks && !claims {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	if claims && p.pvcLister != nil {
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			pvc, err := p.pvcLister.PersistentVolumeClaims(pod.Namespace).Get(v.PersistentVolumeClaim.ClaimName)
			if apierrors.IsNotFound(err) {
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q not found", v.PersistentVolumeClaim.ClaimName))
			}
			if err != nil {
				return nil, fwk.AsStatus(err)
			}
			for _, m := range pvc.Spec.AccessModes {
				if m == v1.ReadWriteOncePod && p.h.SnapshotSharedLister().StorageInfos().IsPVCUsedByPods(pod.Namespace+"/"+pvc.Name) {
					return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonReadWriteOncePodConflict)
				}
			}
		}
	}
	return nil, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (*Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter implements fwk.FilterPlugin.
func (p *Plugin) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsCheck(v) {
			continue
		}
		for _, other := range ni.GetPods() {
			for j := range other.GetPod().Spec.Volumes {
				if conflict(v, &other.GetPod().Spec.Volumes[j]) {
					return fwk.NewStatus(fwk.Unschedulable, ErrReasonDiskConflict)
				}
			}
		}
	}
	return nil
}

// conflict reports whether two volumes may not be mounted on one node:
// the same GCE PD unless both read-only, the same EBS volume, the same RBD
// image on a shared monitor unless both read-only, the same iSCSI IQN
// unless both read-only.
func conflict(a, b *v1.Volume) bool {
	switch {
	case a.GCEPersistentDisk != nil && b.GCEPersistentDisk != nil:
		return a.GCEPersistentDisk.PDName == b.GCEPersistentDisk.PDName && !(a.GCEPersistentDisk.ReadOnly && b.GCEPersistentDisk.ReadOnly)
	case a.AWSElasticBlockStore != nil && b.AWSElasticBlockStore != nil:
		return a.AWSElasticBlockStore.VolumeID == b.AWSElasticBlockStore.VolumeID
	case a.ISCSI != nil && b.ISCSI != nil:
		return a.ISCSI.IQN == b.ISCSI.IQN && !(a.ISCSI.ReadOnly && b.ISCSI.ReadOnly)
	case a.RBD != nil && b.RBD != nil:
		shared := false
		for _, m := range a.RBD.CephMonitors {
			for _, n := range b.RBD.CephMonitors {
				shared = shared || m == n
			}
		}
		return shared && a.RBD.RBDPool == b.RBD.RBDPool && a.RBD.RBDImage == b.RBD.RBDImage && !(a.RBD.ReadOnly && b.RBD.ReadOnly)
	}
	return false
}

// EventsToRegister implements fwk.EnqueueExtensions.
func (*Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add | fwk.Update}},
	}, nil
}
