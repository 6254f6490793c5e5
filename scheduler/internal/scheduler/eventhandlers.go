package scheduler

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// errPodDeleted is the cause a deleted pod's binding cycle is cancelled
// with.
var errPodDeleted = errors.New("pod deleted")

// addEventHandlers wires the informers: pending pods of our profiles to
// the queue, assigned pods and nodes to the cache, and both as cluster
// events that may make unschedulable pods schedulable.
func (s *Scheduler) addEventHandlers(ctx context.Context) error {
	if err := s.addAssignedPodHandler(ctx); err != nil {
		return err
	}
	if err := s.addPendingPodHandler(ctx); err != nil {
		return err
	}
	if err := s.addNodeHandler(ctx); err != nil {
		return err
	}
	return s.addStorageEventHandlers(ctx)
}

// addAssignedPodHandler keeps the cache's view of bound pods, whose
// changes are cluster events: a pod leaving a node may make room.
func (s *Scheduler) addAssignedPodHandler(ctx context.Context) error {
	pods := s.informers.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := asPod(obj)
			return pod != nil && assigned(pod)
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				pod := asPod(obj)
				s.Cache.AddPod(pod)
				s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Add}, nil, pod)
			},
			UpdateFunc: func(oldObj, newObj any) {
				old, pod := asPod(oldObj), asPod(newObj)
				s.Cache.UpdatePod(old, pod)
				if action := podUpdateAction(old, pod); action != fwk.None {
					s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: action}, old, pod)
				}
			},
			DeleteFunc: func(obj any) {
				pod := asPod(obj)
				if pod == nil {
					return
				}
				s.Cache.RemovePod(pod)
				s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, pod, nil)
			},
		},
	}); err != nil {
		return fmt.Errorf("add assigned pod handler: %w", err)
	}
	return nil
}

// addPendingPodHandler queues the pods our profiles are to schedule,
// and takes a deleted one out of the queue and out of any binding cycle
// it waits in.
func (s *Scheduler) addPendingPodHandler(ctx context.Context) error {
	log := klog.FromContext(ctx)
	pods := s.informers.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := asPod(obj)
			return pod != nil && !assigned(pod) && pod.Spec.NodeName == "" && s.Profiles[pod.Spec.SchedulerName] != nil
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { s.Queue.Add(ctx, asPod(obj)) },
			UpdateFunc: func(oldObj, newObj any) {
				old, pod := asPod(oldObj), asPod(newObj)
				if s.Cache.IsAssumed(pod) {
					// Our own binding is under way; the update is our
					// status write or races with it.
					return
				}
				s.Queue.Update(ctx, old, pod)
				s.Queue.UpdateNominatedPod(log, old, podInfo(pod))
			},
			DeleteFunc: func(obj any) {
				pod := asPod(obj)
				if pod == nil {
					return
				}
				s.Queue.Delete(pod)
				for _, f := range s.Profiles {
					f.RejectWaitingPod(pod.UID)
					if p := f.GetPodInPreBind(pod.UID); p != nil {
						p.CancelPod(errPodDeleted.Error())
					}
				}
			},
		},
	}); err != nil {
		return fmt.Errorf("add pending pod handler: %w", err)
	}
	return nil
}

// addNodeHandler keeps the cache's nodes, and turns added and changed
// nodes into cluster events.
func (s *Scheduler) addNodeHandler(ctx context.Context) error {
	nodes := s.informers.Core().V1().Nodes().Informer()
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			node, _ := obj.(*v1.Node)
			if node == nil {
				return
			}
			s.Cache.AddNode(node)
			s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, nil, node)
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, _ := oldObj.(*v1.Node)
			node, _ := newObj.(*v1.Node)
			if old == nil || node == nil {
				return
			}
			s.Cache.UpdateNode(old, node)
			if action := nodeUpdateAction(old, node); action != fwk.None {
				s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.Node, ActionType: action}, old, node)
			}
		},
		DeleteFunc: func(obj any) {
			node, ok := obj.(*v1.Node)
			if !ok {
				if t, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
					node, _ = t.Obj.(*v1.Node)
				}
			}
			if node != nil {
				s.Cache.RemoveNode(node)
			}
		},
	}); err != nil {
		return fmt.Errorf("add node handler: %w", err)
	}
	return nil
}

// addStorageEventHandlers turns changes to claims, volumes, classes and
// CSI objects into cluster events, but only when a plugin registered for
// them: otherwise their informers are never started.
func (s *Scheduler) addStorageEventHandlers(ctx context.Context) error {
	wanted := map[fwk.EventResource]bool{}
	for _, f := range s.Profiles {
		for _, evs := range f.Events {
			for _, ev := range evs {
				wanted[ev.Event.Resource] = true
			}
		}
	}
	f := s.informers
	for _, src := range []struct {
		res      fwk.EventResource
		informer func() cache.SharedIndexInformer
	}{
		{fwk.PersistentVolumeClaim, func() cache.SharedIndexInformer { return f.Core().V1().PersistentVolumeClaims().Informer() }},
		{fwk.PersistentVolume, func() cache.SharedIndexInformer { return f.Core().V1().PersistentVolumes().Informer() }},
		{fwk.StorageClass, func() cache.SharedIndexInformer { return f.Storage().V1().StorageClasses().Informer() }},
		{fwk.CSINode, func() cache.SharedIndexInformer { return f.Storage().V1().CSINodes().Informer() }},
		{fwk.CSIDriver, func() cache.SharedIndexInformer { return f.Storage().V1().CSIDrivers().Informer() }},
		{fwk.CSIStorageCapacity, func() cache.SharedIndexInformer { return f.Storage().V1().CSIStorageCapacities().Informer() }},
	} {
		if !wanted[src.res] {
			continue
		}
		res := src.res
		if _, err := src.informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: res, ActionType: fwk.Add}, nil, obj)
			},
			UpdateFunc: func(oldObj, newObj any) {
				s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: res, ActionType: fwk.Update}, oldObj, newObj)
			},
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				s.Queue.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: res, ActionType: fwk.Delete}, obj, nil)
			},
		}); err != nil {
			return fmt.Errorf("add %s handler: %w", res, err)
		}
	}
	return nil
}

// assigned reports whether pod is bound and still holds its node's
// resources (terminal pods free them).
func assigned(pod *v1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
}

func asPod(obj any) *v1.Pod {
	switch o := obj.(type) {
	case *v1.Pod:
		return o
	case cache.DeletedFinalStateUnknown:
		p, _ := o.Obj.(*v1.Pod)
		return p
	}
	return nil
}

// nodeUpdateAction classifies a node change into upstream's action types.
func nodeUpdateAction(old, node *v1.Node) fwk.ActionType {
	var a fwk.ActionType
	if !equality.Semantic.DeepEqual(old.Status.Allocatable, node.Status.Allocatable) {
		a |= fwk.UpdateNodeAllocatable
	}
	if !reflect.DeepEqual(old.Labels, node.Labels) {
		a |= fwk.UpdateNodeLabel
	}
	if !reflect.DeepEqual(old.Spec.Taints, node.Spec.Taints) || old.Spec.Unschedulable != node.Spec.Unschedulable {
		a |= fwk.UpdateNodeTaint
	}
	if !conditionsEqual(old.Status.Conditions, node.Status.Conditions) {
		a |= fwk.UpdateNodeCondition
	}
	if !reflect.DeepEqual(old.Annotations, node.Annotations) {
		a |= fwk.UpdateNodeAnnotation
	}
	return a
}

// conditionsEqual ignores heartbeat times.
func conditionsEqual(a, b []v1.NodeCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Status != b[i].Status {
			return false
		}
	}
	return true
}

// podUpdateAction classifies an assigned pod's change.
func podUpdateAction(old, pod *v1.Pod) fwk.ActionType {
	var a fwk.ActionType
	if !reflect.DeepEqual(old.Labels, pod.Labels) {
		a |= fwk.UpdatePodLabel
	}
	if !equality.Semantic.DeepEqual(old.Spec.Containers, pod.Spec.Containers) {
		a |= fwk.UpdatePodScaleDown
	}
	return a
}
