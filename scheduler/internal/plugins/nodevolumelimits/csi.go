// Package nodevolumelimits is the NodeVolumeLimits plugin: a node's
// CSINode object says how many volumes of each CSI driver it can attach
// (allocatable count), and a pod may not push any driver past it. Volumes
// count once per node however many pods share them.
package nodevolumelimits

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	volumehelpers "k8s.io/component-helpers/storage/volume"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "NodeVolumeLimits"

// ErrReasonMaxVolumeCountExceeded is upstream's reason.
const ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

// Plugin implements PreFilter and Filter.
type Plugin struct {
	pvcLister     corelisters.PersistentVolumeClaimLister
	pvLister      corelisters.PersistentVolumeLister
	classLister   storagelisters.StorageClassLister
	csiNodeLister storagelisters.CSINodeLister
}

// New is the plugin's factory.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	f := h.SharedInformerFactory()
	if f == nil {
		return nil, fmt.Errorf("%s needs an informer factory", Name)
	}
	return &Plugin{
		pvcLister:     f.Core().V1().PersistentVolumeClaims().Lister(),
		pvLister:      f.Core().V1().PersistentVolumes().Lister(),
		classLister:   f.Storage().V1().StorageClasses().Lister(),
		csiNodeLister: f.Storage().V1().CSINodes().Lister(),
	}, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// PreFilter implements fwk.PreFilterPlugin: pods without CSI-capable
// volumes skip the plugin.
func (p *Plugin) PreFilter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	for _, v := range pod.Spec.Volumes {
		if v.CSI != nil || v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return nil, nil
		}
	}
	return nil, fwk.NewStatus(fwk.Skip)
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (*Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter implements fwk.FilterPlugin.
func (p *Plugin) Filter(_ context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	csiNode, err := p.csiNodeLister.Get(node.Name)
	if apierrors.IsNotFound(err) {
		// No CSINode: no limits known, as upstream.
		return nil
	}
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("get CSINode %s: %w", node.Name, err))
	}
	limits := map[string]int64{}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			limits[d.Name] = int64(*d.Allocatable.Count)
		}
	}
	if len(limits) == 0 {
		return nil
	}
	added := map[string]string{} // volume ID → driver
	p.volumes(pod, added)
	if len(added) == 0 {
		return nil
	}
	attached := map[string]string{}
	for _, other := range ni.GetPods() {
		p.volumes(other.GetPod(), attached)
	}
	perDriver := map[string]int64{}
	for _, d := range attached {
		perDriver[d]++
	}
	for id, d := range added {
		if _, ok := attached[id]; ok {
			continue
		}
		perDriver[d]++
	}
	for d, n := range perDriver {
		if limit, ok := limits[d]; ok && n > limit {
			return fwk.NewStatus(fwk.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// volumes adds pod's CSI volumes to out, keyed by a node-wide identity:
// driver and handle for a bound or inline volume, the claim for an
// unbound one (provisioned by its class's driver).
func (p *Plugin) volumes(pod *v1.Pod, out map[string]string) {
	for _, v := range pod.Spec.Volumes {
		if v.CSI != nil {
			// Inline volumes are distinct per pod.
			out[v.CSI.Driver+"/"+pod.Namespace+"/"+pod.Name+"/"+v.Name] = v.CSI.Driver
			continue
		}
		claimName := ""
		switch {
		case v.PersistentVolumeClaim != nil:
			claimName = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			claimName = pod.Name + "-" + v.Name
		default:
			continue
		}
		pvc, err := p.pvcLister.PersistentVolumeClaims(pod.Namespace).Get(claimName)
		if err != nil {
			continue
		}
		if pvc.Spec.VolumeName == "" {
			class, err := p.classLister.Get(volumehelpers.GetPersistentVolumeClaimClass(pvc))
			if err == nil {
				out[class.Provisioner+"/claim/"+pod.Namespace+"/"+claimName] = class.Provisioner
			}
			continue
		}
		pv, err := p.pvLister.Get(pvc.Spec.VolumeName)
		if err != nil || pv.Spec.CSI == nil {
			continue
		}
		out[pv.Spec.CSI.Driver+"/"+pv.Spec.CSI.VolumeHandle] = pv.Spec.CSI.Driver
	}
}

// EventsToRegister implements fwk.EnqueueExtensions: a pod leaving frees
// attachments; a CSINode, claim or volume change may change the counts.
func (*Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.CSINode, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}},
	}, nil
}
