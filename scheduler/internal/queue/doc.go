// Package queue is the scheduling queue: an active queue in the profile's
// order (priority, then arrival), a back-off queue, and the pods found
// unschedulable, which the cluster events their rejecting plugins
// registered move back; plus the pods nominated to nodes by preemption.
package queue
