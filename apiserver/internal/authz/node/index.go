package node

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Index names on the informers the authorizer reads.
const (
	// refIndex keys pods by each object they use: "<kind>/<ns>/<name>".
	refIndex = "trireme-node-ref"
	// volumeIndex keys claims by the volume bound to them.
	volumeIndex = "trireme-node-volume"
	// volumeSecretIndex keys volumes by the secrets their sources name.
	volumeSecretIndex = "trireme-node-volume-secret"
)

// Reference kinds used in index keys.
const (
	kindSecret        = "secret"
	kindConfigMap     = "configmap"
	kindClaim         = "pvc"
	kindAccount       = "serviceaccount"
	kindResourceClaim = "resourceclaim"
)

func refKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// podRefs lists the keys of every object pod uses that its kubelet must read.
func podRefs(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("index pod references: unexpected %T", obj)
	}
	if pod.Spec.NodeName == "" {
		return nil, nil
	}
	ns := pod.Namespace
	set := map[string]bool{}
	add := func(kind, name string) {
		if name != "" {
			set[refKey(kind, ns, name)] = true
		}
	}
	add(kindAccount, pod.Spec.ServiceAccountName)
	for _, s := range pod.Spec.ImagePullSecrets {
		add(kindSecret, s.Name)
	}
	visitContainers(&pod.Spec, func(c *corev1.Container) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				add(kindSecret, e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				add(kindConfigMap, e.ConfigMapRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add(kindSecret, r.Name)
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add(kindConfigMap, r.Name)
			}
		}
	})
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		volumeRefs(pod.Name, v, add)
	}
	for _, rc := range pod.Status.ResourceClaimStatuses {
		if rc.ResourceClaimName != nil {
			add(kindResourceClaim, *rc.ResourceClaimName)
		}
	}
	for _, rc := range pod.Spec.ResourceClaims {
		if rc.ResourceClaimName != nil {
			add(kindResourceClaim, *rc.ResourceClaimName)
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	return keys, nil
}

func volumeRefs(podName string, v *corev1.Volume, add func(kind, name string)) {
	switch {
	case v.Secret != nil:
		add(kindSecret, v.Secret.SecretName)
	case v.ConfigMap != nil:
		add(kindConfigMap, v.ConfigMap.Name)
	case v.PersistentVolumeClaim != nil:
		add(kindClaim, v.PersistentVolumeClaim.ClaimName)
	case v.Ephemeral != nil:
		// The ephemeral volume controller names the claim after pod and volume.
		add(kindClaim, podName+"-"+v.Name)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				add(kindSecret, s.Secret.Name)
			}
			if s.ConfigMap != nil {
				add(kindConfigMap, s.ConfigMap.Name)
			}
		}
	case v.CSI != nil && v.CSI.NodePublishSecretRef != nil:
		add(kindSecret, v.CSI.NodePublishSecretRef.Name)
	case v.AzureFile != nil:
		add(kindSecret, v.AzureFile.SecretName)
	case v.CephFS != nil && v.CephFS.SecretRef != nil:
		add(kindSecret, v.CephFS.SecretRef.Name)
	case v.FlexVolume != nil && v.FlexVolume.SecretRef != nil:
		add(kindSecret, v.FlexVolume.SecretRef.Name)
	case v.ISCSI != nil && v.ISCSI.SecretRef != nil:
		add(kindSecret, v.ISCSI.SecretRef.Name)
	case v.RBD != nil && v.RBD.SecretRef != nil:
		add(kindSecret, v.RBD.SecretRef.Name)
	case v.ScaleIO != nil && v.ScaleIO.SecretRef != nil:
		add(kindSecret, v.ScaleIO.SecretRef.Name)
	case v.StorageOS != nil && v.StorageOS.SecretRef != nil:
		add(kindSecret, v.StorageOS.SecretRef.Name)
	}
}

func visitContainers(spec *corev1.PodSpec, fn func(*corev1.Container)) {
	for i := range spec.InitContainers {
		fn(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		fn(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		fn((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

// claimVolume keys a claim by the volume bound to it.
func claimVolume(obj any) ([]string, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("index claim volume: unexpected %T", obj)
	}
	if pvc.Spec.VolumeName == "" {
		return nil, nil
	}
	return []string{pvc.Spec.VolumeName}, nil
}

// volumeSecrets keys a volume by the secrets (namespace/name) its source
// names for mounting.
func volumeSecrets(obj any) ([]string, error) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return nil, fmt.Errorf("index volume secrets: unexpected %T", obj)
	}
	var keys []string
	addRef := func(r *corev1.SecretReference) {
		if r != nil && r.Name != "" {
			keys = append(keys, r.Namespace+"/"+r.Name)
		}
	}
	src := &pv.Spec.PersistentVolumeSource
	switch {
	case src.CSI != nil:
		addRef(src.CSI.NodePublishSecretRef)
		addRef(src.CSI.NodeStageSecretRef)
		addRef(src.CSI.NodeExpandSecretRef)
	case src.CephFS != nil:
		addRef(src.CephFS.SecretRef)
	case src.RBD != nil:
		addRef(src.RBD.SecretRef)
	case src.ISCSI != nil:
		addRef(src.ISCSI.SecretRef)
	case src.ScaleIO != nil:
		addRef(src.ScaleIO.SecretRef)
	case src.FlexVolume != nil:
		addRef(src.FlexVolume.SecretRef)
	case src.AzureFile != nil && src.AzureFile.SecretNamespace != nil:
		keys = append(keys, *src.AzureFile.SecretNamespace+"/"+src.AzureFile.SecretName)
	}
	return keys, nil
}

// indexers for each informer.
var (
	podIndexers    = cache.Indexers{refIndex: podRefs}
	claimIndexers  = cache.Indexers{volumeIndex: claimVolume}
	volumeIndexers = cache.Indexers{volumeSecretIndex: volumeSecrets}
)
