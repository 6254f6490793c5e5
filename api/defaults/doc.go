// Package defaults sets the field defaults upstream Kubernetes applies, for
// every served type, so objects read back exactly as from a kube-apiserver.
//
// Each kind has an exported function named after it (Pod, Service,
// Deployment, ...); AddToScheme registers them, and list defaulting that
// applies them item by item, for the decoders to call. Defaults that
// upstream guards with a feature gate follow the gate's default in 1.37.
// Defaults upstream applies elsewhere (cluster IPs and IP families by the
// service registry, a pod's priority by admission, pod-level resources in
// the pod registry via PodLevelResources) are not applied by AddToScheme.
package defaults
