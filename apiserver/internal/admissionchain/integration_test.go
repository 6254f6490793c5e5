package admissionchain_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"trireme.dev/apiserver/internal/testserver"
	"trireme.dev/componentbase/testpki"

	"trireme.dev/componentbase/testwait"
)

// admissionConfiguration makes baseline the cluster's default Pod Security
// level, except in kube-system.
const admissionConfiguration = `
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
    exemptions:
      namespaces: [kube-system]
`

// startServer runs trireme-apiserver in-process with the admission
// configuration above and returns an admin client and its configuration.
func startServer(t *testing.T) (kubernetes.Interface, *rest.Config) {
	t.Helper()
	// Cluster-wide PodSecurity defaults come from the admission
	// configuration file, as kubeadm clusters set them.
	admissionConfig := filepath.Join(t.TempDir(), "admission.yaml")
	if err := os.WriteFile(admissionConfig, []byte(admissionConfiguration), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	s, err := testserver.Start(ctx, testserver.Options{
		Verbose: testing.Verbose(),
		Args:    []string{"--admission-control-config-file=" + admissionConfig},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stop apiserver: %v", err)
		}
	})
	cfg := s.Config()
	return kubernetes.NewForConfigOrDie(cfg), cfg
}

// namespace creates a namespace with its default ServiceAccount, which the
// serviceaccount controller would otherwise create.
func namespace(t *testing.T, c kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	if _, err := c.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create default service account in %s: %v", name, err)
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
	}
}

func TestAdmissionChain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	c, adminConfig := startServer(t)
	ctx := context.Background()

	t.Run("pod without service account is refused", func(t *testing.T) {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nosa"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := c.CoreV1().Pods("nosa").Create(ctx, pod("p"), metav1.CreateOptions{})
		want := `error looking up service account nosa/default: serviceaccount "default" not found`
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want 403 containing %q", err, want)
		}
	})

	t.Run("service account token volume is injected", func(t *testing.T) {
		namespace(t, c, "sa", nil)
		got, err := c.CoreV1().Pods("sa").Create(ctx, pod("p"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.ServiceAccountName != "default" || len(got.Spec.Volumes) != 1 || !strings.HasPrefix(got.Spec.Volumes[0].Name, "kube-api-access-") {
			t.Fatalf("service account %q, volumes %+v", got.Spec.ServiceAccountName, got.Spec.Volumes)
		}
		m := got.Spec.Containers[0].VolumeMounts
		if len(m) != 1 || m[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !m[0].ReadOnly {
			t.Fatalf("mounts %+v", m)
		}
	})

	t.Run("privileged pod refused by PodSecurity restricted", func(t *testing.T) {
		namespace(t, c, "restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		p := pod("priv")
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
		_, err := c.CoreV1().Pods("restricted").Create(ctx, p, metav1.CreateOptions{})
		want := `pods "priv" is forbidden: violates PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true)`
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want 403 containing %q", err, want)
		}
	})

	t.Run("cluster default from admission config refuses privileged pod", func(t *testing.T) {
		namespace(t, c, "unlabelled", nil)
		p := pod("priv")
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
		_, err := c.CoreV1().Pods("unlabelled").Create(ctx, p, metav1.CreateOptions{})
		want := `violates PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)`
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want 403 containing %q", err, want)
		}
	})

	t.Run("LimitRange default appears on new pod", func(t *testing.T) {
		namespace(t, c, "limits", nil)
		lr := &corev1.LimitRange{
			ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type:           corev1.LimitTypeContainer,
				Default:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			}}},
		}
		if _, err := c.CoreV1().LimitRanges("limits").Create(ctx, lr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := c.CoreV1().Pods("limits").Create(ctx, pod("p"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := got.Spec.Containers[0].Resources
		if r.Limits.Cpu().String() != "500m" || r.Requests.Cpu().String() != "100m" {
			t.Fatalf("resources %+v", r)
		}
		if a := got.Annotations["kubernetes.io/limit-ranger"]; a != "LimitRanger plugin set: cpu request for container app; cpu limit for container app" {
			t.Fatalf("annotation %q", a)
		}
	})

	t.Run("ResourceQuota of 2 pods refuses the third", func(t *testing.T) {
		namespace(t, c, "quota", nil)
		hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}
		q, err := c.CoreV1().ResourceQuotas("quota").Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "pods"}, Spec: corev1.ResourceQuotaSpec{Hard: hard},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The resourcequota controller fills status; stand in for it.
		q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}
		if _, err := c.CoreV1().ResourceQuotas("quota").UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"one", "two"} {
			if _, err := c.CoreV1().Pods("quota").Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
				t.Fatalf("pod %s: %v", name, err)
			}
		}
		_, err = c.CoreV1().Pods("quota").Create(ctx, pod("three"), metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2") {
			t.Fatalf("got %v, want 403 exceeded quota", err)
		}
	})

	t.Run("validating webhook denial reaches the user", func(t *testing.T) {
		namespace(t, c, "hooked", nil)
		calls := make(chan string, 100)
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			calls <- review.Request.Name
			review.Response = &admissionv1.AdmissionResponse{
				UID:     review.Request.UID,
				Allowed: false,
				Result:  &metav1.Status{Code: http.StatusForbidden, Message: "configmaps here are vetoed by the test webhook"},
			}
			review.Request = nil
			_ = json.NewEncoder(w).Encode(&review)
		}))
		ts.StartTLS()
		defer ts.Close()
		caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
		url := ts.URL + "/validate"
		none := admissionregistrationv1.SideEffectClassNone
		hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "test-veto"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name:                    "veto.test.trireme.dev",
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
				Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
				NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "hooked"}},
				SideEffects:             &none,
				AdmissionReviewVersions: []string{"v1"},
			}},
		}
		if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, hook, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, hook.Name, metav1.DeleteOptions{})
		}()
		i := 0
		testwait.ForNil(t, 20*time.Second, "webhook denial", func() error {
			i++
			_, err := c.CoreV1().ConfigMaps("hooked").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i)}}, metav1.CreateOptions{})
			if err == nil || !strings.Contains(err.Error(), `admission webhook "veto.test.trireme.dev" denied the request: configmaps here are vetoed by the test webhook`) {
				return fmt.Errorf("create configmap: got %v", err)
			}
			return nil
		})
		select {
		case <-calls:
		default:
			t.Fatal("webhook was never called")
		}
	})

	t.Run("ValidatingAdmissionPolicy in CEL denies", func(t *testing.T) {
		namespace(t, c, "policed", nil)
		policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "named-configmaps"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
					},
				}}},
				Validations: []admissionregistrationv1.Validation{{Expression: "object.metadata.name.startsWith('ok-')", Message: "configmap names must start with ok-"}},
			},
		}
		if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "named-configmaps"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "policed"}}},
			},
		}
		if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.ForNil(t, 20*time.Second, "policy denial", func() error {
			_, err := c.CoreV1().ConfigMaps("policed").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}}, metav1.CreateOptions{})
			want := `ValidatingAdmissionPolicy 'named-configmaps' with binding 'named-configmaps' denied request: configmap names must start with ok-`
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || err == nil || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("create configmap: got %v", err)
			}
			return nil
		})
		if _, err := c.CoreV1().ConfigMaps("policed").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ok-good"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("allowed configmap: %v", err)
		}
	})

	t.Run("CSR for system:masters is refused", func(t *testing.T) {
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "masters"},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request:    testpki.NewRequest(testpki.Cert{CommonName: "mallory", Organization: []string{"system:masters"}}).PEM,
				SignerName: certificatesv1.KubeAPIServerClientSignerName,
				Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
			},
		}
		_, err := c.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
		want := "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want 403 containing %q", err, want)
		}
		csr.Name, csr.Spec.Request = "dev", testpki.NewRequest(testpki.Cert{CommonName: "alice", Organization: []string{"dev"}}).PEM
		got, err := c.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("ordinary CSR: %v", err)
		}
		if got.Spec.Username != "kubernetes-admin" {
			t.Fatalf("requestor %q, want the creating user", got.Spec.Username)
		}
		got.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}}
		// Only /approval decides; /status keeps the decision as it was.
		viaStatus, err := c.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if err != nil || len(viaStatus.Status.Conditions) != 0 {
			t.Fatalf("status update: %v, conditions %+v, want none", err, viaStatus.Status.Conditions)
		}
		got.ResourceVersion = viaStatus.ResourceVersion
		approved, err := c.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, got.Name, got, metav1.UpdateOptions{})
		if err != nil || len(approved.Status.Conditions) != 1 {
			t.Fatalf("approve: %v %+v", err, approved)
		}
	})

	t.Run("ClusterTrustBundle for a signer needs attest", func(t *testing.T) {
		// carol is an ordinary user: admin impersonates her.
		carolConfig := rest.CopyConfig(adminConfig)
		carolConfig.Impersonate = rest.ImpersonationConfig{UserName: "carol", Groups: []string{"system:authenticated"}}
		carol := kubernetes.NewForConfigOrDie(carolConfig)
		for _, obj := range []runtime.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bundle-writer"}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"clustertrustbundles"}, Verbs: []string{"create", "get", "update"}},
			}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bundle-writer"},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "bundle-writer"},
				Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "carol"}}},
		} {
			if err := createRBAC(ctx, c, obj); err != nil {
				t.Fatal(err)
			}
		}
		bundle := &certificatesv1.ClusterTrustBundle{
			ObjectMeta: metav1.ObjectMeta{Name: "example.com:issuer:roots"},
			Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/issuer", TrustBundle: string(testpki.NewCA("test-root").CertPEM)},
		}
		want := `user not permitted to attest for signerName "example.com/issuer"`
		testwait.ForNil(t, 20*time.Second, "attest refusal", func() error {
			_, err := carol.CertificatesV1().ClusterTrustBundles().Create(ctx, bundle, metav1.CreateOptions{})
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("create without attest: got %v, want 403 containing %q", err, want)
			}
			return nil
		})
		attest := []runtime.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "issuer-attester"}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"example.com/issuer"}, Verbs: []string{"attest"}},
			}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "issuer-attester"},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "issuer-attester"},
				Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "carol"}}},
		}
		for _, obj := range attest {
			if err := createRBAC(ctx, c, obj); err != nil {
				t.Fatal(err)
			}
		}
		testwait.ForNil(t, 20*time.Second, "attested create", func() error {
			_, err := carol.CertificatesV1().ClusterTrustBundles().Create(ctx, bundle, metav1.CreateOptions{})
			return err
		})
		// A bundle for another signer is still refused.
		other := bundle.DeepCopy()
		other.Name, other.Spec.SignerName = "example.com:other:roots", "example.com/other"
		if _, err := carol.CertificatesV1().ClusterTrustBundles().Create(ctx, other, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
			t.Fatalf("bundle for another signer: got %v, want 403", err)
		}
	})

	t.Run("resize beyond the node's allocatable is refused", func(t *testing.T) {
		namespace(t, c, "resize", nil)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "small-node"}}
		created, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), corev1.ResourcePods: resource.MustParse("110")}
		created.Status.Allocatable = created.Status.Capacity
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		p := pod("resizable")
		p.Spec.NodeName = "small-node"
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
		p, err = c.CoreV1().Pods("resize").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		testwait.ForNil(t, 20*time.Second, "oversized resize refusal", func() error {
			big := p.DeepCopy()
			big.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
			_, err := c.CoreV1().Pods("resize").UpdateResize(ctx, p.Name, big, metav1.UpdateOptions{})
			want := "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000"
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
				return fmt.Errorf("resize to 3 cpu: got %v, want 403 containing %q", err, want)
			}
			return nil
		})
		fitting := p.DeepCopy()
		fitting.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
		if _, err := c.CoreV1().Pods("resize").UpdateResize(ctx, p.Name, fitting, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("resize to 1 cpu: %v", err)
		}
	})
}

// createRBAC creates a ClusterRole or ClusterRoleBinding as admin.
func createRBAC(ctx context.Context, c kubernetes.Interface, obj runtime.Object) error {
	var err error
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unexpected %T", obj)
	}
	return err
}
