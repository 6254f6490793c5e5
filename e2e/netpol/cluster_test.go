package netpol_test

import (
	"os"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// crdFile is the ClusterNetworkPolicy CRD the addons chart installs.
const crdFile = "../../charts/trireme-addons/charts/netpol/crds/policy.networking.k8s.io_clusternetworkpolicies.yaml"

var cnpResource = schema.GroupVersionResource{Group: "policy.networking.k8s.io", Version: "v1beta1", Resource: "clusternetworkpolicies"}

// installCRD installs the chart's ClusterNetworkPolicy CRD and waits until
// it is served.
func installCRD(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("%s: %v", crdFile, err)
	}
	cs, err := apiextensionsclient.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(t.Context(), &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create the ClusterNetworkPolicy CRD: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(t.Context(), crd.Name, metav1.GetOptions{})
		if err == nil {
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ClusterNetworkPolicy CRD is not established after 30s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setClusterPolicies makes the cluster hold exactly policies (YAML).
func setClusterPolicies(t *testing.T, policies ...string) {
	t.Helper()
	dc, err := dynamic.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	res := dc.Resource(cnpResource)
	if err := res.DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("delete cluster network policies: %v", err)
	}
	for _, p := range policies {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(p), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if _, err := res.Create(t.Context(), &obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ClusterNetworkPolicy %s: %v", obj.GetName(), err)
		}
	}
}

// clusterCases are the ClusterNetworkPolicy cases of the matrix: the
// Admin tier decides before NetworkPolicies, Pass hands over to them, and
// the Baseline tier applies only to pods no NetworkPolicy isolates.
func clusterCases(tp *topology) []matrixCase {
	const denyDevToProd = `
apiVersion: policy.networking.k8s.io/v1beta1
kind: ClusterNetworkPolicy
metadata: {name: deny-dev-to-prod}
spec:
  tier: Admin
  priority: 20
  subject: {namespaces: {matchLabels: {env: prod}}}
  ingress:
  - {name: no-dev, action: Deny, from: [{namespaces: {matchLabels: {env: dev}}}]}
`
	const passRemote = `
apiVersion: policy.networking.k8s.io/v1beta1
kind: ClusterNetworkPolicy
metadata: {name: pass-remote}
spec:
  tier: Admin
  priority: 10
  subject: {namespaces: {matchLabels: {env: prod}}}
  ingress:
  - {action: Pass, from: [{pods: {namespaceSelector: {}, podSelector: {matchLabels: {app: remote}}}}]}
`
	const baselineDeny = `
apiVersion: policy.networking.k8s.io/v1beta1
kind: ClusterNetworkPolicy
metadata: {name: baseline-deny-dev}
spec:
  tier: Baseline
  priority: 1
  subject: {namespaces: {matchLabels: {env: prod}}}
  ingress:
  - {action: Deny, from: [{namespaces: {matchLabels: {env: dev}}}], protocols: [{tcp: {destinationPort: {number: 80}}}]}
`
	allowAllProd := []*networkingv1.NetworkPolicy{np("np-prod", "allow-all", networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{}}})}
	return []matrixCase{
		{name: "admin deny beats a NetworkPolicy that allows", cluster: []string{denyDevToProd}, policies: allowAllProd,
			want: bothRows("web    ++..", "db     ++..", "client ++++", "remote ++++", "node   ++++")},
		{name: "admin pass hands the remote pod over to NetworkPolicy", cluster: []string{passRemote, denyDevToProd}, policies: allowAllProd,
			want: bothRows("web    ++.+", "db     ++.+", "client ++++", "remote ++++", "node   ++++")},
		{name: "baseline deny where no NetworkPolicy isolates", cluster: []string{baselineDeny},
			want: map[string]string{
				"tcp": "web    ++..\ndb     ++..\nclient ++++\nremote ++++\nnode   ++++\n",
				"udp": "web    ++++\ndb     ++++\nclient ++++\nremote ++++\nnode   ++++\n",
			}},
		{name: "a NetworkPolicy overrides the baseline", cluster: []string{baselineDeny}, policies: allowAllProd,
			want: bothRows("web    ++++", "db     ++++", "client ++++", "remote ++++", "node   ++++")},
	}
}
