package nodeipam

import (
	"context"
	"net/netip"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

func TestCIDRSet(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		mask    int
		occupy  []string
		want    []string // successive allocations; "full" for ErrFull
	}{
		{"ipv4 in order", "10.244.0.0/16", 24, nil, []string{"10.244.0.0/24", "10.244.1.0/24"}},
		{"occupied skipped", "10.244.0.0/16", 24, []string{"10.244.0.0/24", "10.244.2.0/23"}, []string{"10.244.1.0/24", "10.244.4.0/24"}},
		{"full", "10.0.0.0/23", 24, nil, []string{"10.0.0.0/24", "10.0.1.0/24", "full"}},
		{"ipv6", "fd00::/48", 64, nil, []string{"fd00::/64", "fd00:0:0:1::/64"}},
		{"outside cluster ignored", "10.0.0.0/23", 24, []string{"192.168.0.0/24"}, []string{"10.0.0.0/24"}},
		{"larger occupied range covers all", "10.0.0.0/23", 24, []string{"10.0.0.0/8"}, []string{"full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewCIDRSet(netip.MustParsePrefix(tt.cluster), tt.mask)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range tt.occupy {
				s.Occupy(netip.MustParsePrefix(o))
			}
			for _, want := range tt.want {
				got, err := s.Allocate()
				if want == "full" {
					if err == nil {
						t.Errorf("allocated %s, want the set full", got)
					}
					continue
				}
				if err != nil || got.String() != want {
					t.Errorf("Allocate = %s, %v; want %s", got, err, want)
				}
			}
		})
	}
}

func TestOptionsSets(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		want    []string
		wantErr bool
	}{
		{"single stack default mask", Options{ClusterCIDRs: "10.244.0.0/16"}, []string{"10.244.0.0/16/24"}, false},
		{"single stack mask flag", Options{ClusterCIDRs: "10.244.0.0/16", MaskSize: 26}, []string{"10.244.0.0/16/26"}, false},
		{"dual stack", Options{ClusterCIDRs: "10.244.0.0/16,fd00::/48", MaskSizeIPv4: 25}, []string{"10.244.0.0/16/25", "fd00::/48/64"}, false},
		{"same family twice", Options{ClusterCIDRs: "10.0.0.0/16,10.1.0.0/16"}, nil, true},
		{"malformed", Options{ClusterCIDRs: "nonsense"}, nil, true},
		{"mask too small", Options{ClusterCIDRs: "10.0.0.0/16", MaskSize: 8}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sets, err := tt.opts.Sets()
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			for i, s := range sets {
				if got := s.Cluster.String() + "/" + strconv.Itoa(s.Mask); got != tt.want[i] {
					t.Errorf("set %d = %s, want %s", i, got, tt.want[i])
				}
			}
		})
	}
}

// TestRederivesAtStart checks a restart never hands out a CIDR an
// existing node holds.
func TestRederivesAtStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objs := []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24", PodCIDRs: []string{"10.244.0.0/24"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: corev1.NodeSpec{PodCIDR: "garbage"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "new"}},
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	recorder := record.NewFakeRecorder(10)
	c, err := New(Options{Client: client, Nodes: factory.Core().V1().Nodes(), Recorder: recorder, ClusterCIDRs: "10.244.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	go c.Run(ctx, 1)
	var got string
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, "new", metav1.GetOptions{})
		got = n.Spec.PodCIDR
		return err == nil && got != "", nil
	})
	if err != nil {
		t.Fatalf("node new got no CIDR: %v", err)
	}
	if got != "10.244.1.0/24" {
		t.Errorf("node new got %s, want 10.244.1.0/24 (10.244.0.0/24 is node old's)", got)
	}
	select {
	case e := <-recorder.Events:
		t.Logf("event: %s", e)
	case <-time.After(time.Second):
		t.Errorf("no Warning event for node bad's malformed CIDR")
	}
}
