package certificates

import (
	"crypto/x509/pkix"
	"net"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"

	"trireme.dev/controller-manager/internal/certificates/testcsr"
)

func TestValidate(t *testing.T) {
	node := testcsr.NodeSubject("n1")
	tests := []struct {
		name     string
		spec     testcsr.Spec
		validate func(*testing.T, testcsr.Spec) error
		wantErr  bool
	}{
		{"kubelet client", testcsr.Spec{Subject: node, Usages: testcsr.ClientUsages}, client, false},
		{"kubelet client with key encipherment", testcsr.Spec{Subject: node, Usages: append(testcsr.ClientUsages, certificatesv1.UsageKeyEncipherment)}, client, false},
		{"kubelet client with a DNS name", testcsr.Spec{Subject: node, DNS: []string{"n1"}, Usages: testcsr.ClientUsages}, client, true},
		{"kubelet client wrong organization", testcsr.Spec{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"admins"}}, Usages: testcsr.ClientUsages}, client, true},
		{"kubelet client wrong common name", testcsr.Spec{Subject: pkix.Name{CommonName: "alice", Organization: []string{"system:nodes"}}, Usages: testcsr.ClientUsages}, client, true},
		{"kubelet client server usage", testcsr.Spec{Subject: node, Usages: testcsr.ServingUsages}, client, true},
		{"kubelet serving", testcsr.Spec{Subject: node, DNS: []string{"n1"}, IPs: []net.IP{net.ParseIP("10.0.0.1")}, Usages: testcsr.ServingUsages}, serving, false},
		{"kubelet serving without names", testcsr.Spec{Subject: node, Usages: testcsr.ServingUsages}, serving, true},
		{"kubelet serving client usage", testcsr.Spec{Subject: node, DNS: []string{"n1"}, Usages: testcsr.ClientUsages}, serving, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.validate(t, tt.spec); (err != nil) != tt.wantErr {
				t.Errorf("err = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func client(t *testing.T, s testcsr.Spec) error {
	csr := testcsr.Make(s)
	req, err := ParseRequest(csr)
	if err != nil {
		t.Fatal(err)
	}
	return ValidateKubeletClient(req, csr.Spec.Usages)
}

func serving(t *testing.T, s testcsr.Spec) error {
	csr := testcsr.Make(s)
	req, err := ParseRequest(csr)
	if err != nil {
		t.Fatal(err)
	}
	return ValidateKubeletServing(req, csr.Spec.Usages)
}

func TestParseRequestRejectsGarbage(t *testing.T) {
	csr := testcsr.Make(testcsr.Spec{Subject: testcsr.NodeSubject("n")})
	csr.Spec.Request = []byte("not pem")
	if _, err := ParseRequest(csr); err == nil {
		t.Error("garbage request parsed")
	}
}
