package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
)

// resourceCase is one served resource and a valid object of its kind.
// Adding a resource to the server means adding one line to resourceCases;
// TestEveryServedResourceHasACase fails until it is there.
type resourceCase struct {
	gvr schema.GroupVersionResource
	// sample returns a valid object to be created in namespace ns (ignored
	// by cluster-scoped kinds); name and namespace are set by the test.
	sample func(ns string) runtime.Object
	// name returns a unique name built from n; nil means "<resource>-<n>".
	name func(n int) string
	// terminates marks kinds whose delete first makes the object
	// Terminating; it goes once finalized (namespaces).
	terminates bool
	// serverStatus marks kinds whose status a server controller writes
	// soon after create (API priority and fairness sets a FlowSchema's Dangling
	// condition); the test waits for it so later resourceVersions hold still.
	serverStatus bool
}

func core(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: resource}
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

var resourceCases = []resourceCase{
	{gvr: core("configmaps"), sample: sampleConfigMap},
	{gvr: core("secrets"), sample: sampleSecret},
	{gvr: core("serviceaccounts"), sample: sampleServiceAccount},
	{gvr: core("endpoints"), sample: sampleEndpoints},
	{gvr: core("nodes"), sample: sampleNode},
	{gvr: core("events"), sample: sampleCoreEvent},
	{gvr: core("limitranges"), sample: sampleLimitRange},
	{gvr: core("resourcequotas"), sample: sampleResourceQuota},
	{gvr: core("persistentvolumes"), sample: samplePersistentVolume},
	{gvr: core("persistentvolumeclaims"), sample: samplePersistentVolumeClaim},
	{gvr: core("podtemplates"), sample: samplePodTemplate},
	{gvr: core("replicationcontrollers"), sample: sampleReplicationController},
	{gvr: core("pods"), sample: samplePod},
	{gvr: core("services"), sample: sampleService},
	{gvr: core("namespaces"), sample: sampleNamespace, terminates: true},
	{gvr: gvr("apps", "v1", "deployments"), sample: sampleDeployment},
	{gvr: gvr("apps", "v1", "replicasets"), sample: sampleReplicaSet},
	{gvr: gvr("apps", "v1", "statefulsets"), sample: sampleStatefulSet},
	{gvr: gvr("apps", "v1", "daemonsets"), sample: sampleDaemonSet},
	{gvr: gvr("apps", "v1", "controllerrevisions"), sample: sampleControllerRevision},
	{gvr: gvr("batch", "v1", "jobs"), sample: sampleJob},
	{gvr: gvr("batch", "v1", "cronjobs"), sample: sampleCronJob},
	{gvr: gvr("autoscaling", "v2", "horizontalpodautoscalers"), sample: sampleHorizontalPodAutoscaler},
	{gvr: gvr("autoscaling", "v1", "horizontalpodautoscalers"), sample: sampleHorizontalPodAutoscalerV1},
	{gvr: gvr("coordination.k8s.io", "v1", "leases"), sample: sampleLease},
	{gvr: gvr("discovery.k8s.io", "v1", "endpointslices"), sample: sampleEndpointSlice},
	{gvr: gvr("events.k8s.io", "v1", "events"), sample: sampleEventsV1Event},
	{gvr: gvr("scheduling.k8s.io", "v1", "priorityclasses"), sample: samplePriorityClass},
	{gvr: gvr("policy", "v1", "poddisruptionbudgets"), sample: samplePodDisruptionBudget},
	{gvr: gvr("networking.k8s.io", "v1", "ingresses"), sample: sampleIngress},
	{gvr: gvr("networking.k8s.io", "v1", "ingressclasses"), sample: sampleIngressClass},
	{gvr: gvr("networking.k8s.io", "v1", "networkpolicies"), sample: sampleNetworkPolicy},
	{gvr: gvr("networking.k8s.io", "v1", "servicecidrs"), sample: sampleServiceCIDR},
	{gvr: gvr("networking.k8s.io", "v1", "ipaddresses"), sample: sampleIPAddress, name: ipAddressName},
	{gvr: gvr("storage.k8s.io", "v1", "storageclasses"), sample: sampleStorageClass},
	{gvr: gvr("storage.k8s.io", "v1", "csidrivers"), sample: sampleCSIDriver},
	{gvr: gvr("rbac.authorization.k8s.io", "v1", "roles"), sample: sampleRole},
	{gvr: gvr("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"), sample: sampleValidatingWebhookConfiguration},
	{gvr: gvr("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"), sample: sampleMutatingWebhookConfiguration},
	{gvr: gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"), sample: sampleValidatingAdmissionPolicy},
	{gvr: gvr("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings"), sample: sampleValidatingAdmissionPolicyBinding},
	{gvr: gvr("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicies"), sample: sampleMutatingAdmissionPolicy},
	{gvr: gvr("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicybindings"), sample: sampleMutatingAdmissionPolicyBinding},
	{gvr: gvr("certificates.k8s.io", "v1", "certificatesigningrequests"), sample: sampleCSR},
	{gvr: gvr("certificates.k8s.io", "v1", "clustertrustbundles"), sample: sampleClusterTrustBundle},
	{gvr: gvr("certificates.k8s.io", "v1", "podcertificaterequests"), sample: samplePodCertificateRequest},
	{gvr: gvr("storagemigration.k8s.io", "v1", "storageversionmigrations"), sample: sampleStorageVersionMigration},
	{gvr: gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), sample: sampleRoleBinding},
	{gvr: gvr("rbac.authorization.k8s.io", "v1", "clusterroles"), sample: sampleClusterRole},
	{gvr: gvr("rbac.authorization.k8s.io", "v1", "clusterrolebindings"), sample: sampleClusterRoleBinding},
	{gvr: gvr("storage.k8s.io", "v1", "csistoragecapacities"), sample: sampleCSIStorageCapacity},
	{gvr: gvr("storage.k8s.io", "v1", "volumeattributesclasses"), sample: sampleVolumeAttributesClass},
	{gvr: gvr("storage.k8s.io", "v1", "csinodes"), sample: sampleCSINode},
	{gvr: gvr("storage.k8s.io", "v1", "volumeattachments"), sample: sampleVolumeAttachment},
	{gvr: gvr("node.k8s.io", "v1", "runtimeclasses"), sample: sampleRuntimeClass},
	{gvr: gvr("flowcontrol.apiserver.k8s.io", "v1", "flowschemas"), sample: sampleFlowSchema, serverStatus: true},
	{gvr: gvr("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations"), sample: samplePriorityLevelConfiguration},
	{gvr: gvr("resource.k8s.io", "v1", "deviceclasses"), sample: sampleDeviceClass},
	{gvr: gvr("resource.k8s.io", "v1", "resourceclaims"), sample: sampleResourceClaim},
	{gvr: gvr("resource.k8s.io", "v1", "resourceclaimtemplates"), sample: sampleResourceClaimTemplate},
	{gvr: gvr("resource.k8s.io", "v1", "resourceslices"), sample: sampleResourceSlice},
	{gvr: gvr("resource.k8s.io", "v1", "devicetaintrules"), sample: sampleDeviceTaintRule},
}

// id names the case as kubectl does: resource.group, or resource for core.
func (rc resourceCase) id() string {
	if rc.gvr.Group == "" {
		return rc.gvr.Resource
	}
	return rc.gvr.Resource + "." + rc.gvr.Group
}

func (rc resourceCase) newName() string {
	n := int(nameCounter.Add(1))
	if rc.name != nil {
		return rc.name(n)
	}
	return fmt.Sprintf("%s-%d", rc.gvr.Resource, n)
}

// object returns the sample as an unstructured object named name, with the
// given labels, in ns when the resource is namespaced.
func (rc resourceCase) object(t *testing.T, namespaced bool, ns, name string, labels map[string]string) *unstructured.Unstructured {
	t.Helper()
	typed := rc.sample(ns)
	kinds, _, err := clientscheme.Scheme.ObjectKinds(typed)
	if err != nil {
		t.Fatalf("kind of %T: %v", typed, err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		t.Fatalf("convert %T: %v", typed, err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(kinds[0])
	u.SetName(name)
	if namespaced {
		u.SetNamespace(ns)
	}
	u.SetLabels(labels)
	return u
}

// coveredElsewhere are served resources whose objects the generic checks
// cannot make (a CRD's name must match its spec; an APIService's must name
// its group version): crd_test.go and aggregation_test.go test them.
var coveredElsewhere = map[schema.GroupVersionResource]bool{
	gvr("apiextensions.k8s.io", "v1", "customresourcedefinitions"): true,
	gvr("apiregistration.k8s.io", "v1", "apiservices"):             true,
}

// servedResource is what discovery says about one resource.
type servedResource struct {
	namespaced bool
	kind       string
	verbs      map[string]bool
}

// servedResources returns every resource (not subresource) discovery lists.
func servedResources(t *testing.T) map[schema.GroupVersionResource]servedResource {
	t.Helper()
	_, lists, err := client.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	out := map[schema.GroupVersionResource]servedResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatalf("discovery group version %q: %v", l.GroupVersion, err)
		}
		if strings.HasSuffix(gv.Group, testCRDGroupSuffix) {
			continue // other tests' custom resources
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			verbs := map[string]bool{}
			for _, v := range r.Verbs {
				verbs[v] = true
			}
			// Reviews (TokenReview, SubjectAccessReview, ...) are create-only
			// questions, not stored objects; they have their own tests.
			if !verbs["get"] {
				continue
			}
			out[gv.WithResource(r.Name)] = servedResource{namespaced: r.Namespaced, kind: r.Kind, verbs: verbs}
		}
	}
	return out
}

func TestEveryServedResourceHasACase(t *testing.T) {
	served := servedResources(t)
	cased := map[schema.GroupVersionResource]bool{}
	for _, rc := range resourceCases {
		cased[rc.gvr] = true
		if _, ok := served[rc.gvr]; !ok {
			t.Errorf("%s has a case but discovery does not list it", rc.id())
		}
	}
	var missing []string
	for r := range served {
		if !cased[r] && !coveredElsewhere[r] {
			missing = append(missing, r.String())
		}
	}
	sort.Strings(missing)
	for _, r := range missing {
		t.Errorf("discovery lists %s but resourceCases has no case for it", r)
	}
}

// TestResources runs the same checks against every served resource.
func TestResources(t *testing.T) {
	served := servedResources(t)
	ns := newNamespace(t)
	for _, rc := range resourceCases {
		t.Run(rc.id(), func(t *testing.T) {
			res, ok := served[rc.gvr]
			if !ok {
				t.Fatalf("%s is not served", rc.gvr)
			}
			r := &resourceRun{rc: rc, served: res, ns: ns}
			r.api = dyn.Resource(rc.gvr)
			if res.namespaced {
				r.api = dyn.Resource(rc.gvr).Namespace(ns)
			}
			t.Run("lifecycle", r.testLifecycle)
			t.Run("dry-run create", r.testDryRunCreate)
			t.Run("apply create", r.testApplyCreate)
			t.Run("pagination", r.testPagination)
			t.Run("finalizers", r.testFinalizers)
		})
	}
}

// resourceRun holds what the checks of one resource share.
type resourceRun struct {
	rc     resourceCase
	served servedResource
	ns     string
	api    dynamic.ResourceInterface
}

func (r *resourceRun) object(t *testing.T, name string, labels map[string]string) *unstructured.Unstructured {
	return r.rc.object(t, r.served.namespaced, r.ns, name, labels)
}

// wantGone fails unless name is gone, or, for kinds that terminate, is
// Terminating and then goes once finalized.
func (r *resourceRun) wantGone(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	got, err := r.api.Get(ctx, name, metav1.GetOptions{})
	if !r.rc.terminates {
		wantStatus(t, err, 404)
		return
	}
	if err != nil {
		t.Fatalf("get terminating %s: %v", name, err)
	}
	if got.GetDeletionTimestamp() == nil {
		t.Fatalf("%s has no deletionTimestamp after delete", name)
	}
	r.finalize(t, ctx, name)
}

// finalize clears spec.finalizers through the finalize subresource and
// expects the object to be gone.
func (r *resourceRun) finalize(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	got, err := r.api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s to finalize: %v", name, err)
	}
	unstructured.RemoveNestedField(got.Object, "spec", "finalizers")
	if _, err := r.api.Update(ctx, got, metav1.UpdateOptions{}, "finalize"); err != nil && !isNotFound(err) {
		t.Fatalf("finalize %s: %v", name, err)
	}
	_, err = r.api.Get(ctx, name, metav1.GetOptions{})
	wantStatus(t, err, 404)
}
