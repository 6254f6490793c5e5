package resourcequota

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The resource names quota accounts for, as upstream spells them.
const (
	countPrefix           = "count/"
	requestsPrefix        = "requests."
	limitsPrefix          = "limits."
	storageClassSuffix    = ".storageclass.storage.k8s.io/"
	hugePagesPrefix       = "hugepages-"
	betaStorageClassAnnot = "volume.beta.kubernetes.io/storage-class"
)

// legacyCounts are the object counts quota named before count/<resource>
// existed; each counts the core resource of the same name.
var legacyCounts = map[corev1.ResourceName]string{
	corev1.ResourceConfigMaps:             "configmaps",
	corev1.ResourceSecrets:                "secrets",
	corev1.ResourceQuotas:                 "resourcequotas",
	corev1.ResourceReplicationControllers: "replicationcontrollers",
}

// family says which evaluator computes a resource name's usage.
type family int

const (
	familyNone family = iota
	familyPods
	familyServices
	familyClaims
	familyCount
)

// classify returns the evaluator of name and, for object counts, the
// group and resource counted (its version is found through discovery).
func classify(name corev1.ResourceName) (family, schema.GroupResource) {
	switch name {
	case corev1.ResourcePods, "count/pods":
		return familyPods, schema.GroupResource{}
	case corev1.ResourceServices, "count/services", corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers:
		return familyServices, schema.GroupResource{}
	case corev1.ResourcePersistentVolumeClaims, "count/persistentvolumeclaims", corev1.ResourceRequestsStorage:
		return familyClaims, schema.GroupResource{}
	}
	if r, ok := legacyCounts[name]; ok {
		return familyCount, schema.GroupResource{Resource: r}
	}
	s := string(name)
	if strings.Contains(s, storageClassSuffix) {
		return familyClaims, schema.GroupResource{}
	}
	if rest, ok := strings.CutPrefix(s, countPrefix); ok {
		// count/<resource>.<group>; the core group has no suffix.
		resource, group, _ := strings.Cut(rest, ".")
		if resource == "" {
			return familyNone, schema.GroupResource{}
		}
		return familyCount, schema.GroupResource{Group: group, Resource: resource}
	}
	if podResource(name) {
		return familyPods, schema.GroupResource{}
	}
	return familyNone, schema.GroupResource{}
}

// podResource reports whether name is a compute resource charged to pods:
// cpu, memory, ephemeral-storage and huge pages bare or with requests./
// limits., and extended resources with requests.
func podResource(name corev1.ResourceName) bool {
	s := string(name)
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	if strings.HasPrefix(s, hugePagesPrefix) {
		return true
	}
	if base, ok := strings.CutPrefix(s, limitsPrefix); ok {
		switch corev1.ResourceName(base) {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
			return true
		}
		return false
	}
	if base, ok := strings.CutPrefix(s, requestsPrefix); ok {
		if base == "storage" {
			return false
		}
		switch corev1.ResourceName(base) {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
			return true
		}
		// Extended resources are domain-qualified and outside kubernetes.io.
		return strings.HasPrefix(base, hugePagesPrefix) ||
			(strings.Contains(base, "/") && !strings.Contains(base, "kubernetes.io/"))
	}
	return false
}
