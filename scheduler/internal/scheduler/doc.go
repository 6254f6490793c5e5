// Package scheduler is trireme-scheduler's loop: informers feed the cache
// and the queue; each cycle pops a pod, filters and scores nodes with the
// pod's profile, assumes the pod on the chosen node and binds it in the
// background; failures are reported as upstream does (a FailedScheduling
// event and the PodScheduled condition) and the pod is requeued.
package scheduler
