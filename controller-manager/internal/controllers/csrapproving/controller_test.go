package csrapproving

import (
	"context"
	"net"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/certificates"
	"trireme.dev/controller-manager/internal/certificates/testcsr"
)

func TestSync(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "n1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.1"},
	}}}
	client := testcsr.Spec{Name: "c", Signer: certificatesv1.KubeAPIServerClientKubeletSignerName, Subject: testcsr.NodeSubject("n1"), Usages: testcsr.ClientUsages}
	bootstrap := client
	bootstrap.Username, bootstrap.Groups = "system:bootstrap:abcdef", []string{"system:bootstrappers"}
	renewal := client
	renewal.Username, renewal.Groups = "system:node:n1", []string{"system:nodes"}
	serving := testcsr.Spec{Name: "c", Signer: certificatesv1.KubeletServingSignerName, Subject: testcsr.NodeSubject("n1"),
		Username: "system:node:n1", Groups: []string{"system:nodes"}, DNS: []string{"n1"}, IPs: []net.IP{net.ParseIP("10.0.0.1")}, Usages: testcsr.ServingUsages}
	foreignServing := serving
	foreignServing.DNS = []string{"evil.example"}
	otherNodeServing := serving
	otherNodeServing.Username = "system:node:n2"
	apiClient := testcsr.Spec{Name: "c", Signer: certificatesv1.KubeAPIServerClientSignerName, Subject: testcsr.NodeSubject("n1"), Username: "alice", Usages: testcsr.ClientUsages}

	tests := []struct {
		name string
		spec testcsr.Spec
		// allowed are the subresources the SubjectAccessReview allows.
		allowed      []string
		wantApproved bool
	}{
		{"bootstrap token allowed nodeclient", bootstrap, []string{"nodeclient"}, true},
		{"bootstrap token not allowed", bootstrap, nil, false},
		{"renewal allowed selfnodeclient", renewal, []string{"selfnodeclient"}, true},
		{"renewal for another node needs nodeclient", func() testcsr.Spec { s := renewal; s.Username = "system:node:n2"; return s }(), []string{"selfnodeclient"}, false},
		{"serving with the node's own names", serving, nil, true},
		{"serving with a foreign name", foreignServing, nil, false},
		{"serving asked by another node", otherNodeServing, nil, false},
		{"serving for an unknown node", func() testcsr.Spec {
			s := serving
			s.Subject = testcsr.NodeSubject("ghost")
			s.Username = "system:node:ghost"
			return s
		}(), nil, false},
		{"other signers are left alone", apiClient, []string{"nodeclient", "selfnodeclient"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			csr := testcsr.Make(tt.spec)
			c, client := start(t, ctx, tt.allowed, csr, node)
			if err := c.sync(ctx, csr.Name); err != nil {
				t.Fatal(err)
			}
			got, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if certificates.Approved(got) != tt.wantApproved {
				t.Errorf("approved = %v, want %v (%+v)", certificates.Approved(got), tt.wantApproved, got.Status.Conditions)
			}
		})
	}
}

func TestMalformedRequestGetsEvent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	csr := testcsr.Make(testcsr.Spec{Name: "bad", Signer: certificatesv1.KubeAPIServerClientKubeletSignerName})
	csr.Spec.Request = []byte("garbage")
	recorder := record.NewFakeRecorder(10)
	client := fake.NewClientset(csr)
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(Options{Client: client, CSRs: factory.Certificates().V1().CertificateSigningRequests(), Nodes: factory.Core().V1().Nodes(), Recorder: recorder})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := c.sync(ctx, "bad"); err != nil {
		t.Fatalf("a malformed CSR must not be retried: %v", err)
	}
	if len(recorder.Events) != 1 {
		t.Errorf("events = %d, want one Warning", len(recorder.Events))
	}
}

func start(t *testing.T, ctx context.Context, allowed []string, objs ...runtime.Object) (*Controller, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(objs...)
	client.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		for _, sub := range allowed {
			if sar.Spec.ResourceAttributes.Subresource == sub {
				sar.Status.Allowed = true
			}
		}
		return true, sar, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(Options{Client: client, CSRs: factory.Certificates().V1().CertificateSigningRequests(), Nodes: factory.Core().V1().Nodes(), Recorder: record.NewFakeRecorder(10)})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return c, client
}

func TestServingApprovedOnceNodeHasTheAddress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	csr := testcsr.Make(testcsr.Spec{Name: "serving", Signer: certificatesv1.KubeletServingSignerName, Subject: testcsr.NodeSubject("n1"),
		Username: "system:node:n1", Groups: []string{"system:nodes"}, DNS: []string{"n1"}, Usages: testcsr.ServingUsages})
	c, client := start(t, ctx, nil, csr, node)
	go c.Run(ctx, 1)
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n1"}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.CertificatesV1().CertificateSigningRequests().Get(ctx, "serving", metav1.GetOptions{})
		return err == nil && certificates.Approved(got), nil
	})
	if err != nil {
		t.Fatalf("serving CSR not approved after its node got the address: %v", err)
	}
}
