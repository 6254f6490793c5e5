package kubelet

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

func portPod(name string, phase corev1.PodPhase, ports ...corev1.ContainerPort) *corev1.Pod {
	p := testPod(name)
	p.Spec.Containers[0].Ports = ports
	p.Status.Phase = phase
	return p
}

// TestAdmitHostPorts: a pod asking for a host port that another active
// pod on the node holds is refused, with upstream's semantics of host IP
// and protocol; pods that finished, were removed or were refused
// themselves hold nothing.
func TestAdmitHostPorts(t *testing.T) {
	tcp := func(port int32) corev1.ContainerPort {
		return corev1.ContainerPort{ContainerPort: port, HostPort: port}
	}
	on := func(p corev1.ContainerPort, ip string, proto corev1.Protocol) corev1.ContainerPort {
		p.HostIP, p.Protocol = ip, proto
		return p
	}
	type holder struct {
		pod      *corev1.Pod
		removed  bool
		finished bool
		rejected bool
	}
	tests := []struct {
		name    string
		holders []holder
		pod     *corev1.Pod
		want    bool // refused
	}{
		{name: "no host port", holders: []holder{{pod: portPod("a", corev1.PodRunning, tcp(80))}}, pod: portPod("b", "", corev1.ContainerPort{ContainerPort: 80}), want: false},
		{name: "free port", holders: []holder{{pod: portPod("a", corev1.PodRunning, tcp(80))}}, pod: portPod("b", "", tcp(81)), want: false},
		{name: "same port", holders: []holder{{pod: portPod("a", corev1.PodRunning, tcp(21017))}}, pod: portPod("b", "", tcp(21017)), want: true},
		{name: "same port, holder still pending", holders: []holder{{pod: portPod("a", corev1.PodPending, tcp(21017))}}, pod: portPod("b", "", tcp(21017)), want: true},
		{name: "unset protocol is TCP", holders: []holder{{pod: portPod("a", corev1.PodRunning, on(tcp(53), "", corev1.ProtocolTCP))}}, pod: portPod("b", "", tcp(53)), want: true},
		{name: "other protocol", holders: []holder{{pod: portPod("a", corev1.PodRunning, on(tcp(53), "", corev1.ProtocolUDP))}}, pod: portPod("b", "", tcp(53)), want: false},
		{name: "other host IPs", holders: []holder{{pod: portPod("a", corev1.PodRunning, on(tcp(80), "10.0.0.1", ""))}}, pod: portPod("b", "", on(tcp(80), "10.0.0.2", "")), want: false},
		{name: "same host IP", holders: []holder{{pod: portPod("a", corev1.PodRunning, on(tcp(80), "10.0.0.1", ""))}}, pod: portPod("b", "", on(tcp(80), "10.0.0.1", "")), want: true},
		{name: "every address against one", holders: []holder{{pod: portPod("a", corev1.PodRunning, on(tcp(80), "10.0.0.1", ""))}}, pod: portPod("b", "", tcp(80)), want: true},
		{name: "one address against every", holders: []holder{{pod: portPod("a", corev1.PodRunning, on(tcp(80), "0.0.0.0", ""))}}, pod: portPod("b", "", on(tcp(80), "10.0.0.1", "")), want: true},
		{name: "holder succeeded", holders: []holder{{pod: portPod("a", corev1.PodSucceeded, tcp(80))}}, pod: portPod("b", "", tcp(80)), want: false},
		{name: "holder finished", holders: []holder{{pod: portPod("a", corev1.PodRunning, tcp(80)), finished: true}}, pod: portPod("b", "", tcp(80)), want: false},
		{name: "holder removed", holders: []holder{{pod: portPod("a", corev1.PodRunning, tcp(80)), removed: true}}, pod: portPod("b", "", tcp(80)), want: false},
		{name: "holder refused itself", holders: []holder{{pod: portPod("a", corev1.PodPending, tcp(80)), rejected: true}}, pod: portPod("b", "", tcp(80)), want: false},
		{name: "sidecar's port", holders: []holder{{pod: func() *corev1.Pod {
			p := portPod("a", corev1.PodRunning)
			p.Spec.InitContainers = []corev1.Container{{Name: "side", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Ports: []corev1.ContainerPort{tcp(80)}}}
			return p
		}()}}, pod: portPod("b", "", tcp(80)), want: true},
		{name: "started already (kubelet restart)", holders: []holder{{pod: portPod("a", corev1.PodPending, tcp(80))}}, pod: func() *corev1.Pod {
			p := portPod("b", corev1.PodRunning, tcp(80))
			p.Status.StartTime = &metav1.Time{}
			return p
		}(), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for _, h := range tt.holders {
				w := newPodWorker(h.pod.UID)
				w.pod, w.removed, w.finished = h.pod, h.removed, h.finished
				if h.rejected {
					w.rejected = &rejection{reason: reasonNodePorts}
				}
				f.k.workers[h.pod.UID] = w
			}
			r := f.k.admit(tt.pod)
			if (r != nil) != tt.want {
				t.Fatalf("admit = %+v, want refused %v", r, tt.want)
			}
			if r != nil && (r.reason != "NodePorts" || r.message != messageNodePorts) {
				t.Errorf("rejection %+v", r)
			}
		})
	}
}

// TestRejectedPodFailsWithoutRunning: a refused pod gets no sandbox, an
// Event says why, and its status is Failed with upstream's reason; the
// port is free again once its holder is gone.
func TestRejectedPodFailsWithoutRunning(t *testing.T) {
	port := corev1.ContainerPort{ContainerPort: 21017, HostPort: 21017}
	holder := portPod("holder", "", port)
	pod := portPod("ss-0", "", port)
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	f := newFixture(t, holder, pod)
	hw := f.syncedWorker(t, holder)
	recorder := record.NewFakeRecorder(10)
	f.k.cfg.Recorder = recorder

	w := newPodWorker(pod.UID)
	w.update(pod)
	w.rejected = f.k.admitOrReject(pod)
	if w.rejected == nil {
		t.Fatal("pod admitted on a taken host port")
	}
	f.k.workers[pod.UID] = w
	f.sync(t, w, pod)
	f.sync(t, w, f.apiPod(t, "ss-0"))
	for _, s := range f.runtime.Sandboxes {
		if s.Metadata.Uid == string(pod.UID) {
			t.Fatalf("refused pod got a sandbox")
		}
	}
	st := f.apiPod(t, "ss-0").Status
	if st.Phase != corev1.PodFailed || st.Reason != "NodePorts" || st.Message != "Pod was rejected: "+messageNodePorts {
		t.Errorf("status phase %s reason %q message %q", st.Phase, st.Reason, st.Message)
	}
	if !hasConditionTrue(st.Conditions, corev1.PodScheduled) {
		t.Errorf("PodScheduled lost: %+v", st.Conditions)
	}
	select {
	case e := <-recorder.Events:
		if !strings.HasPrefix(e, "Warning NodePorts ") {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event for the refusal")
	}

	hw.remove()
	again := portPod("ss-0-again", "", port)
	again.UID = types.UID("again-uid")
	if r := f.k.admit(again); r != nil {
		t.Errorf("refused after the holder went: %+v", r)
	}
}
