package resourcequota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/quota/v1/generic"
)

// storageClassSuffix is how quotas name per-class storage:
// <class>.storageclass.storage.k8s.io/requests.storage.
const storageClassSuffix = ".storageclass.storage.k8s.io/"

var pvcCount = generic.ObjectCountQuotaResourceNameFor(corev1.Resource("persistentvolumeclaims"))

func newPVCEvaluator(list generic.ListFuncByNamespace) *evaluator {
	return &evaluator{
		gr:    corev1.Resource("persistentvolumeclaims"),
		names: []corev1.ResourceName{corev1.ResourcePersistentVolumeClaims, pvcCount, corev1.ResourceRequestsStorage},
		prefixed: func(n corev1.ResourceName) bool {
			_, rest, ok := strings.Cut(string(n), storageClassSuffix)
			return ok && (rest == string(corev1.ResourceRequestsStorage) || rest == string(corev1.ResourcePersistentVolumeClaims))
		},
		list:  list,
		usage: pvcUsage,
		handles: func(a admission.Attributes) bool {
			// Growing a claim charges the difference.
			return a.GetSubresource() == "" && (a.GetOperation() == admission.Create || a.GetOperation() == admission.Update)
		},
	}
}

func pvcUsage(obj runtime.Object) (corev1.ResourceList, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T, want a PersistentVolumeClaim", obj)
	}
	one := resource.MustParse("1")
	out := corev1.ResourceList{corev1.ResourcePersistentVolumeClaims: one, pvcCount: one}
	storage, hasStorage := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	// A claim being shrunk back after a failed expansion still holds what
	// was allocated.
	if alloc, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && alloc.Cmp(storage) > 0 {
		storage, hasStorage = alloc, true
	}
	if hasStorage {
		out[corev1.ResourceRequestsStorage] = storage
	}
	if class := pvcClass(pvc); class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one
		if hasStorage {
			out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = storage
		}
	}
	return out, nil
}

// pvcClass is the claim's storage class, from the field or the beta annotation.
func pvcClass(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}
