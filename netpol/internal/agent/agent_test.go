package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/knftables"

	"trireme.dev/netpol/internal/ruleset"

	"trireme.dev/componentbase/testwait"
)

func pod(ns, name, node, ip string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}},
	}
}

// refusingTable is a table the kernel refuses whenever a policy named
// "broken" is in what is written.
type refusingTable struct{ *ruleset.Writer }

func (t refusingTable) refuses(want *ruleset.Objects) bool {
	for n := range want.Counters {
		if strings.Contains(n, "/broken/") {
			return true
		}
	}
	return false
}

func (t refusingTable) Sync(ctx context.Context, want *ruleset.Objects) (int, error) {
	if t.refuses(want) {
		return 0, errors.New("Error: Could not process rule")
	}
	return t.Writer.Sync(ctx, want)
}

func (t refusingTable) Check(_ context.Context, want *ruleset.Objects) error {
	if t.refuses(want) {
		return errors.New("Error: Could not process rule")
	}
	return nil
}

func TestAgent(t *testing.T) {
	ctx := t.Context()
	allowAll := []networkingv1.NetworkPolicyIngressRule{{}}
	client := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{PodCIDRs: []string{"10.0.0.0/24", "fd00::/64"}}},
		pod("prod", "web", "n1", "10.0.0.1", map[string]string{"app": "web"}),
		pod("prod", "db", "n2", "10.0.0.2", map[string]string{"app": "db"}),
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "deny"}},
	)
	fakeNFT := knftables.NewFake(ruleset.Family, ruleset.Table)
	recorder := events.NewFakeRecorder(10)
	factory := informers.NewSharedInformerFactory(client, 0)
	a := New(Config{NodeName: "n1", Client: client, Table: refusingTable{&ruleset.Writer{NFT: fakeNFT}}, Recorder: recorder, Metrics: NewMetrics(nil, logr.Discard()), Log: logr.Discard()}, factory, factory)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	if err := a.Healthy(); err == nil {
		t.Error("healthy before any sync")
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Healthy(); err != nil {
		t.Errorf("unhealthy after a sync: %v", err)
	}
	if dump := fakeNFT.Dump(); !strings.Contains(dump, "10.0.0.1 : jump ingress-") || strings.Contains(dump, "10.0.0.2 :") {
		t.Errorf("want only the local pod policed:\n%s", dump)
	}
	if dump := fakeNFT.Dump(); !strings.Contains(dump, "ip daddr { 10.0.0.0/24 } ip daddr != @local-pods") || !strings.Contains(dump, "add element inet trireme-netpol local-pods { 10.0.0.1 }") {
		t.Errorf("want the node's IPv4 pod range closed but to the pods the agent knows:\n%s", dump)
	}

	// A policy the kernel refuses: the sync fails, the rules in force stay,
	// and the policy gets a Warning Event naming why.
	before := fakeNFT.Dump()
	broken := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "broken"}, Spec: networkingv1.NetworkPolicySpec{Ingress: allowAll}}
	if _, err := client.NetworkingV1().NetworkPolicies("prod").Create(ctx, broken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.ForTrue(t, 10*time.Second, "the policy in the informer", func() bool { _, err := a.policies.NetworkPolicies("prod").Get("broken"); return err == nil })
	if err := a.Sync(ctx); err == nil {
		t.Fatal("sync of a refused table succeeded")
	}
	if fakeNFT.Dump() != before {
		t.Error("a refused sync changed the table")
	}
	select {
	case e := <-recorder.Events:
		if !strings.Contains(e, "Warning RulesRefused") || !strings.Contains(e, "Could not process rule") {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no Event on the refused policy")
	}
	select {
	case e := <-recorder.Events:
		t.Errorf("an Event on a policy the kernel takes: %q", e)
	default:
	}
}

func TestConvertPod(t *testing.T) {
	p := pod("ns", "p", "n1", "10.0.0.1", nil)
	p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: "fd00::1"})
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}, corev1.ContainerPort{ContainerPort: 9})
	got := convertPod(p)
	if len(got.IPs) != 1 || got.IPs[0].String() != "10.0.0.1" {
		t.Errorf("IPs %v, want the IPv4 one", got.IPs)
	}
	if len(got.Ports) != 2 || got.Ports[0].Protocol != corev1.ProtocolTCP || got.Ports[1].Protocol != corev1.ProtocolUDP {
		t.Errorf("named ports %+v", got.Ports)
	}
	p.Status.Phase = corev1.PodSucceeded
	if convertPod(p) != nil {
		t.Error("a finished pod is converted: its address may be another pod's")
	}
}

// TestDisarm: when the agent stops, pods it does not know are no longer
// held back, and the policies stay.
func TestDisarm(t *testing.T) {
	ctx := t.Context()
	client := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{PodCIDRs: []string{"10.0.0.0/24"}}},
		pod("prod", "web", "n1", "10.0.0.1", nil),
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "deny"}},
	)
	fakeNFT := knftables.NewFake(ruleset.Family, ruleset.Table)
	factory := informers.NewSharedInformerFactory(client, 0)
	a := New(Config{NodeName: "n1", Client: client, Table: &ruleset.Writer{NFT: fakeNFT}, Log: logr.Discard()}, factory, factory)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fakeNFT.Dump(), "@local-pods") {
		t.Fatalf("no rule for unknown pods while running:\n%s", fakeNFT.Dump())
	}
	if err := a.Disarm(ctx); err != nil {
		t.Fatal(err)
	}
	if dump := fakeNFT.Dump(); strings.Contains(dump, "@local-pods") || !strings.Contains(dump, "10.0.0.1 : jump ingress-") {
		t.Errorf("after Disarm, want the policies and no rule for unknown pods:\n%s", dump)
	}
}
