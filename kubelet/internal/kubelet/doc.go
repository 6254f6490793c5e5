// Package kubelet runs the pods bound to the node: one worker per pod
// drives the container runtime (CRI) towards the pod's spec — sandbox,
// volumes, init containers, containers, restarts with back-off, graceful
// termination — and writes the pod's status back to the apiserver. The
// CRI configurations come from package podconfig, the statuses from
// podstatus and image pull credentials from pullsecrets.
package kubelet
