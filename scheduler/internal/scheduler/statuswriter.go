package scheduler

import (
	"context"
	"hash/fnv"
	"sync"

	v1 "k8s.io/api/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// statusWriters is how many goroutines write pod statuses.
const statusWriters = 8

// statusWriter writes failed pods' PodScheduled conditions and
// nominations in the background, as upstream's asynchronous API calls
// do, so that a scheduling cycle does not wait for the apiserver. A pod's
// writes always go to the same goroutine, so they land in the order made.
type statusWriter struct {
	client clientset.Interface
	queues [statusWriters]chan statusWrite
	wg     sync.WaitGroup
}

type statusWrite struct {
	ctx        context.Context
	pod        *v1.Pod
	cond       *v1.PodCondition
	nominating *fwk.NominatingInfo
}

// newStatusWriter starts the writers; they stop once ctx ends and their
// queues are drained.
func newStatusWriter(ctx context.Context, client clientset.Interface) *statusWriter {
	w := &statusWriter{client: client}
	for i := range w.queues {
		w.queues[i] = make(chan statusWrite, 256)
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for {
				select {
				case sw := <-w.queues[i]:
					w.write(sw)
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return w
}

func (w *statusWriter) write(sw statusWrite) {
	if err := updatePodStatus(sw.ctx, w.client, sw.pod, sw.cond, sw.nominating); err != nil {
		klog.FromContext(sw.ctx).Error(err, "Update pod status", "pod", klog.KObj(sw.pod))
	}
}

// enqueue queues a write; it blocks only while the pod's writer has a
// full queue.
func (w *statusWriter) enqueue(ctx context.Context, pod *v1.Pod, cond *v1.PodCondition, nominating *fwk.NominatingInfo) {
	h := fnv.New32a()
	h.Write([]byte(pod.UID))
	select {
	case w.queues[h.Sum32()%statusWriters] <- statusWrite{ctx: ctx, pod: pod, cond: cond, nominating: nominating}:
	case <-ctx.Done():
	}
}

// wait waits for the writers to stop.
func (w *statusWriter) wait() { w.wg.Wait() }
