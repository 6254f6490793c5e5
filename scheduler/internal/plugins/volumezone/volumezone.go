// Package volumezone is the VolumeZone plugin: a pod's bound volumes that
// carry zone or region labels confine it to nodes in those zones and
// regions.
package volumezone

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	volumehelpers "k8s.io/component-helpers/storage/volume"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "VolumeZone"

// ErrReasonConflict is upstream's reason.
const ErrReasonConflict = "node(s) had no available volume zone"

const stateKey fwk.StateKey = Name

// topologyLabels are the labels a volume's zone and region are read from,
// current and deprecated.
var topologyLabels = []string{
	v1.LabelTopologyZone, v1.LabelTopologyRegion,
	v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion,
}

// Plugin implements PreFilter and Filter.
type Plugin struct {
	pvcLister   corelisters.PersistentVolumeClaimLister
	pvLister    corelisters.PersistentVolumeLister
	classLister storagelisters.StorageClassLister
}

// New is the plugin's factory.
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	f := h.SharedInformerFactory()
	if f == nil {
		return nil, fmt.Errorf("%s needs an informer factory", Name)
	}
	return &Plugin{
		pvcLister:   f.Core().V1().PersistentVolumeClaims().Lister(),
		pvLister:    f.Core().V1().PersistentVolumes().Lister(),
		classLister: f.Storage().V1().StorageClasses().Lister(),
	}, nil
}

// Name implements fwk.Plugin.
func (*Plugin) Name() string { return Name }

// constraint is one volume's allowed values of one topology label.
type constraint struct {
	key    string
	values map[string]bool
}

type state []constraint

// Clone implements fwk.StateData.
func (s state) Clone() fwk.StateData { return s }

// PreFilter implements fwk.PreFilterPlugin: it collects the zone and
// region labels of the pod's bound volumes. Unbound claims of
// WaitForFirstConsumer classes are VolumeBinding's to place.
func (p *Plugin) PreFilter(_ context.Context, cs fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	var s state
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		pvc, err := p.pvcLister.PersistentVolumeClaims(pod.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q not found", name))
		}
		if err != nil {
			return nil, fwk.AsStatus(fmt.Errorf("get claim %s: %w", name, err))
		}
		if pvc.Spec.VolumeName == "" {
			className := volumehelpers.GetPersistentVolumeClaimClass(pvc)
			if className == "" {
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
			}
			class, err := p.classLister.Get(className)
			if err != nil {
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("unable to find storage class: %s", className))
			}
			if class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "PersistentVolume had no name")
		}
		pv, err := p.pvLister.Get(pvc.Spec.VolumeName)
		if err != nil {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("unable to find persistent volume: %s", pvc.Spec.VolumeName))
		}
		for _, key := range topologyLabels {
			val, ok := pv.Labels[key]
			if !ok {
				continue
			}
			// A volume may span zones: "z1__z2".
			vals := map[string]bool{}
			for _, z := range strings.Split(val, "__") {
				vals[strings.TrimSpace(z)] = true
			}
			s = append(s, constraint{key: key, values: vals})
		}
	}
	if len(s) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	cs.Write(stateKey, s)
	return nil, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (*Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter implements fwk.FilterPlugin. A node without any topology label
// passes, as upstream.
func (p *Plugin) Filter(_ context.Context, cs fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	d, err := cs.Read(stateKey)
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("read %s state: %w", Name, err))
	}
	s, _ := d.(state)
	labels := ni.Node().Labels
	hasTopology := false
	for _, key := range topologyLabels {
		_, ok := labels[key]
		hasTopology = hasTopology || ok
	}
	if !hasTopology {
		return nil
	}
	for _, c := range s {
		val, ok := labels[c.key]
		if !ok || !c.values[val] {
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonConflict)
		}
	}
	return nil
}

// EventsToRegister implements fwk.EnqueueExtensions.
func (*Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.StorageClass, ActionType: fwk.Add}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Add | fwk.Update}},
	}, nil
}
