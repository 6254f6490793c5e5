package pods

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

	"trireme.dev/apiserver/internal/registry"
)

// EvictionStore serves pods/eviction: a delete that honours the pod's
// PodDisruptionBudget, as `kubectl drain` expects.
type EvictionStore struct {
	pods, pdbs *registry.Store
}

// NewEvictionStore returns the eviction subresource of pods.
func NewEvictionStore(pods, pdbs *registry.Store) *EvictionStore {
	return &EvictionStore{pods: pods, pdbs: pdbs}
}

// New implements rest.Storage.
func (e *EvictionStore) New() runtime.Object { return &policyv1.Eviction{} }

// Destroy implements rest.Storage.
func (e *EvictionStore) Destroy() {}

// Create implements rest.NamedCreater.
func (e *EvictionStore) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	eviction, ok := obj.(*policyv1.Eviction)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an Eviction: %T", obj))
	}
	if eviction.Name != "" && eviction.Name != name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if createValidation != nil {
		if err := createValidation(ctx, eviction); err != nil {
			return nil, err
		}
	}
	got, err := e.pods.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pod := got.(*corev1.Pod)
	deleteOptions := eviction.DeleteOptions
	if deleteOptions == nil {
		deleteOptions = &metav1.DeleteOptions{}
	}
	deleteOptions = deleteOptions.DeepCopy()
	if len(options.DryRun) > 0 {
		deleteOptions.DryRun = options.DryRun
	}
	if !budgetApplies(pod) {
		return e.delete(ctx, pod, deleteOptions)
	}
	pdb, err := e.budgetFor(ctx, pod)
	if err != nil || pdb == nil {
		if err != nil {
			return nil, err
		}
		return e.delete(ctx, pod, deleteOptions)
	}
	if pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow && !podReady(pod) {
		return e.delete(ctx, pod, deleteOptions)
	}
	if err := e.takeDisruption(ctx, pdb, pod.Name, len(deleteOptions.DryRun) > 0); err != nil {
		return nil, err
	}
	return e.delete(ctx, pod, deleteOptions)
}

// delete marks pod disrupted, unless it has finished, and deletes it.
func (e *EvictionStore) delete(ctx context.Context, pod *corev1.Pod, options *metav1.DeleteOptions) (runtime.Object, error) {
	if len(options.DryRun) == 0 && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		if err := e.markDisrupted(ctx, pod.Name); err != nil {
			return nil, err
		}
	}
	if _, _, err := e.pods.Delete(ctx, pod.Name, rest.ValidateAllObjectFunc, options); err != nil {
		return nil, err
	}
	return &metav1.Status{Status: metav1.StatusSuccess, Code: 201}, nil
}

// markDisrupted sets the pod's DisruptionTarget condition (reason
// EvictionByEvictionAPI) before its deletion, as upstream's apiserver does:
// the kubelet keeps it in the pod's final status, so that a Job's
// podFailurePolicy can tell an eviction from a failure of the pod's own.
func (e *EvictionStore) markDisrupted(ctx context.Context, name string) error {
	key, err := e.pods.KeyFunc(ctx, name)
	if err != nil {
		return err
	}
	err = e.pods.Storage.GuaranteedUpdate(ctx, key, &corev1.Pod{}, false, nil, storage.SimpleUpdate(func(obj runtime.Object) (runtime.Object, error) {
		pod := obj.(*corev1.Pod)
		want := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Now()}
		for i, c := range pod.Status.Conditions {
			if c.Type != corev1.DisruptionTarget {
				continue
			}
			if c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
				return pod, nil
			}
			if c.Status == want.Status {
				want.LastTransitionTime = c.LastTransitionTime
			}
			pod.Status.Conditions[i] = want
			return pod, nil
		}
		pod.Status.Conditions = append(pod.Status.Conditions, want)
		return pod, nil
	}), false, nil)
	if err != nil {
		return fmt.Errorf("mark pod %s disrupted: %w", name, err)
	}
	return nil
}

// budgetApplies is false for pods whose removal cannot disrupt anything.
func budgetApplies(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return false
	}
	return pod.DeletionTimestamp == nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// budgetFor returns the one PodDisruptionBudget selecting pod, nil if none.
func (e *EvictionStore) budgetFor(ctx context.Context, pod *corev1.Pod) (*policyv1.PodDisruptionBudget, error) {
	listed, err := e.pdbs.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list disruption budgets: %w", err)
	}
	var match []policyv1.PodDisruptionBudget
	for _, pdb := range listed.(*policyv1.PodDisruptionBudgetList).Items {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || pdb.Spec.Selector == nil || sel.Empty() {
			continue
		}
		if sel.Matches(labelsOf(pod)) {
			match = append(match, pdb)
		}
	}
	switch len(match) {
	case 0:
		return nil, nil
	case 1:
		return &match[0], nil
	}
	return nil, apierrors.NewInternalError(fmt.Errorf("this pod has more than one PodDisruptionBudget, which the eviction subresource does not support"))
}

// takeDisruption spends one of the budget's allowed disruptions on pod, or
// answers 429 when none is left.
func (e *EvictionStore) takeDisruption(ctx context.Context, pdb *policyv1.PodDisruptionBudget, podName string, dryRun bool) error {
	key, err := e.pdbs.KeyFunc(ctx, pdb.Name)
	if err != nil {
		return err
	}
	return e.pdbs.Storage.GuaranteedUpdate(ctx, key, &policyv1.PodDisruptionBudget{}, false, nil, storage.SimpleUpdate(func(obj runtime.Object) (runtime.Object, error) {
		pdb := obj.(*policyv1.PodDisruptionBudget)
		if pdb.Status.ObservedGeneration < pdb.Generation {
			return nil, tooMany(fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdb.Name))
		}
		if pdb.Status.DisruptionsAllowed <= 0 {
			return nil, tooMany(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy))
		}
		pdb.Status.DisruptionsAllowed--
		if pdb.Status.DisruptedPods == nil {
			pdb.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pdb.Status.DisruptedPods[podName] = metav1.Now()
		return pdb, nil
	}), dryRun, nil)
}

func tooMany(cause string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
	return err
}

// GroupVersionKind implements rest.GroupVersionKindProvider: evictions are
// policy/v1 objects posted to a core/v1 subresource.
func (e *EvictionStore) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return policyv1.SchemeGroupVersion.WithKind("Eviction")
}
