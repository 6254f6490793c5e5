// Package clusterphases holds the init phases that talk to a running apiserver: the
// admin group's ClusterRoleBinding, upload-config, bootstrap-token (tokens, the RBAC
// that lets nodes join, and the signed kube-public/cluster-info), mark-control-plane
// and waiting for the control plane to become healthy.
package clusterphases

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/yaml"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/pki"
)

// Names of the objects these phases create.
const (
	ConfigMapName             = "triremeadm-config"
	ConfigMapKey              = "ClusterConfiguration"
	ClusterAdminsBinding      = "kubeadm:cluster-admins"
	NodeBootstrapperBinding   = "kubeadm:kubelet-bootstrap"
	AutoApproveBinding        = "kubeadm:node-autoapprove-bootstrap"
	AutoApproveRenewalBinding = "kubeadm:node-autoapprove-certificate-rotation"
	GetNodesRole              = "kubeadm:get-nodes"
	ClusterInfoRole           = "kubeadm:bootstrap-signer-clusterinfo"
	ConfigReaderRole          = "triremeadm:nodes-triremeadm-config"
	ControlPlaneLabel         = "node-role.kubernetes.io/control-plane"
	NodesGroup                = "system:nodes"
)

// EnsureAdminBinding binds the kubeadm:cluster-admins group (admin.conf's) to
// cluster-admin; it must run with super-admin.conf, whose system:masters group needs
// no binding.
func EnsureAdminBinding(ctx context.Context, c kubernetes.Interface) error {
	return applyClusterRoleBinding(ctx, c, ClusterAdminsBinding, "cluster-admin", group(pki.ClusterAdminsGroup))
}

// UploadConfig stores cluster in kube-system/triremeadm-config and lets nodes and
// bootstrapping nodes read it.
func UploadConfig(ctx context.Context, c kubernetes.Interface, cluster *v1alpha1.ClusterConfiguration) error {
	data, err := yaml.Marshal(cluster)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: metav1.NamespaceSystem},
		Data:       map[string]string{ConfigMapKey: string(data)},
	}
	if err := applyConfigMap(ctx, c, cm); err != nil {
		return err
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigReaderRole, Namespace: metav1.NamespaceSystem},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{ConfigMapName}, Verbs: []string{"get"}}},
	}
	return ApplyRoleAndBinding(ctx, c, role, group(NodesGroup), group(v1alpha1.DefaultNodeBootstrapGroup))
}

// BootstrapRBAC lets bootstrap tokens' holders join as kubeadm's do: bootstrappers
// may create CSRs and read Nodes, their node-client CSRs are auto-approved, and so
// are nodes' renewals of their own client certificates.
func BootstrapRBAC(ctx context.Context, c kubernetes.Interface, groups []string) error {
	var subjects []rbacv1.Subject
	for _, g := range groups {
		subjects = append(subjects, group(g))
	}
	if err := applyClusterRoleBinding(ctx, c, NodeBootstrapperBinding, "system:node-bootstrapper", subjects...); err != nil {
		return err
	}
	if err := applyClusterRoleBinding(ctx, c, AutoApproveBinding, "system:certificates.k8s.io:certificatesigningrequests:nodeclient", subjects...); err != nil {
		return err
	}
	if err := applyClusterRoleBinding(ctx, c, AutoApproveRenewalBinding, "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", group(NodesGroup)); err != nil {
		return err
	}
	cr := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: GetNodesRole},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}},
	}
	if err := applyClusterRole(ctx, c, cr); err != nil {
		return err
	}
	return applyClusterRoleBinding(ctx, c, GetNodesRole, GetNodesRole, subjects...)
}

// ClusterInfo publishes kube-public/cluster-info (the control plane's URL and CA, as a
// kubeconfig without credentials) and lets anonymous users read it; the
// controller-manager's bootstrapsigner adds a JWS signature per token.
func ClusterInfo(ctx context.Context, c kubernetes.Interface, clusterName, server string, caPEM []byte) error {
	cfg := kubeconfig.New(clusterName, server, caPEM, "", nil, nil)
	cfg.AuthInfos, cfg.Contexts, cfg.CurrentContext = nil, nil, ""
	cfg.Clusters = map[string]*clientcmdapi.Cluster{"": cfg.Clusters[clusterName]}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo, Namespace: metav1.NamespacePublic},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: string(data)},
	}
	if err := applyConfigMap(ctx, c, cm); err != nil {
		return err
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterInfoRole, Namespace: metav1.NamespacePublic},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
			ResourceNames: []string{bootstrapapi.ConfigMapClusterInfo}, Verbs: []string{"get"}}},
	}
	return ApplyRoleAndBinding(ctx, c, role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:anonymous"})
}

// MarkControlPlane waits up to timeout for the Node name to register, then labels it
// as a control-plane node and sets taints (none for a single-node cluster).
func MarkControlPlane(ctx context.Context, c kubernetes.Interface, name string, taints []corev1.Taint, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		node, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if node.Labels == nil {
				node.Labels = map[string]string{}
			}
			node.Labels[ControlPlaneLabel] = ""
			for _, t := range taints {
				if !slices.ContainsFunc(node.Spec.Taints, func(x corev1.Taint) bool { return x.Key == t.Key && x.Effect == t.Effect }) {
					node.Spec.Taints = append(node.Spec.Taints, t)
				}
			}
			if _, err := c.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err == nil {
				return nil
			} else if !apierrors.IsConflict(err) {
				return fmt.Errorf("mark node %s: %w", name, err)
			}
			continue
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("get node %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s did not register within %s (is the kubelet running?)", name, timeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// VIPManagerRole lets the virtual-IP managers elect through their Lease.
const VIPManagerRole = "triremeadm:vip-manager"

// VIPManagerRBAC lets user (the virtual-IP managers') read and write Leases in
// kube-system.
func VIPManagerRBAC(ctx context.Context, c kubernetes.Interface, user string) error {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: VIPManagerRole, Namespace: metav1.NamespaceSystem},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "list", "watch", "create", "update"}}},
	}
	return ApplyRoleAndBinding(ctx, c, role, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user})
}

// Endpoint is a health endpoint to wait for.
type Endpoint struct {
	// Name is the component.
	Name string
	// URL is its health URL.
	URL string
	// CA verifies its serving certificate; nil skips verification (the scheduler's and
	// controller-manager's self-signed certificates, as kubeadm does).
	CA *x509.Certificate
}

// WaitHealthy polls every endpoint until each answers 200 or timeout passes,
// calling progress with the names still waited for.
func WaitHealthy(ctx context.Context, endpoints []Endpoint, timeout time.Duration, progress func(waiting []string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pending := slices.Clone(endpoints)
	for {
		var still []Endpoint
		var names []string
		for _, e := range pending {
			if !healthy(ctx, e) {
				still = append(still, e)
				names = append(names, e.Name)
			}
		}
		if len(still) == 0 {
			return nil
		}
		pending = still
		if progress != nil {
			progress(names)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not healthy after %s: %v", timeout, names)
		case <-time.After(time.Second):
		}
	}
}

func healthy(ctx context.Context, e Endpoint) bool {
	tc := &tls.Config{InsecureSkipVerify: e.CA == nil} //nolint:gosec // self-signed component certs, as kubeadm
	if e.CA != nil {
		pool := x509.NewCertPool()
		pool.AddCert(e.CA)
		tc.RootCAs = pool
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.URL, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

// writer creates and updates objects of one resource: a typed client.
type writer[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// createOrUpdate creates obj, or replaces it when it exists already, so
// that init and upgrade write the same objects; kind and name are for the
// error.
func createOrUpdate[T any](ctx context.Context, api writer[T], obj T, kind, name string) error {
	if _, err := api.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s: %w", kind, name, err)
		}
		if _, err := api.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update %s %s: %w", kind, name, err)
		}
	}
	return nil
}

func applyConfigMap(ctx context.Context, c kubernetes.Interface, cm *corev1.ConfigMap) error {
	api := c.CoreV1().ConfigMaps(cm.Namespace)
	return createOrUpdate(ctx, api, cm, "configmap", cm.Namespace+"/"+cm.Name)
}

func applyClusterRole(ctx context.Context, c kubernetes.Interface, r *rbacv1.ClusterRole) error {
	api := c.RbacV1().ClusterRoles()
	return createOrUpdate(ctx, api, r, "clusterrole", r.Name)
}

func applyClusterRoleBinding(ctx context.Context, c kubernetes.Interface, name, role string, subjects ...rbacv1.Subject) error {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
	api := c.RbacV1().ClusterRoleBindings()
	return createOrUpdate(ctx, api, b, "clusterrolebinding", name)
}

// ApplyRoleAndBinding creates or updates r and a RoleBinding of the same
// name granting it to subjects.
func ApplyRoleAndBinding(ctx context.Context, c kubernetes.Interface, r *rbacv1.Role, subjects ...rbacv1.Subject) error {
	roles := c.RbacV1().Roles(r.Namespace)
	if err := createOrUpdate(ctx, roles, r, "role", r.Namespace+"/"+r.Name); err != nil {
		return err
	}
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: r.Namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name},
		Subjects:   subjects,
	}
	bindings := c.RbacV1().RoleBindings(r.Namespace)
	return createOrUpdate(ctx, bindings, b, "rolebinding", b.Namespace+"/"+b.Name)
}

// CloudControllerManagerRole is the cloud-controller-manager's ClusterRole,
// by upstream's name for it.
const CloudControllerManagerRole = "system:cloud-controller-manager"

// CloudControllerManagerRBAC grants user (the cloud-controller-manager's)
// what its controllers and provider do: initialize and delete Nodes, give
// LoadBalancer Services their status, record Events, elect a leader in
// kube-system, read Namespaces for pool selection and keep AddressPools'
// status; and, as every component serving delegated authentication, the
// auth-delegator role and the authentication ConfigMap.
func CloudControllerManagerRBAC(ctx context.Context, c kubernetes.Interface, user string) error {
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: CloudControllerManagerRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"services/status"}, Verbs: []string{"update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "update", "patch"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update"}},
			{APIGroups: []string{"loadbalancer.trireme.dev"}, Resources: []string{"addresspools"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"loadbalancer.trireme.dev"}, Resources: []string{"addresspools/status"}, Verbs: []string{"update", "patch"}},
		},
	}
	if err := applyClusterRole(ctx, c, role); err != nil {
		return err
	}
	if err := applyClusterRoleBinding(ctx, c, CloudControllerManagerRole, CloudControllerManagerRole, subject); err != nil {
		return err
	}
	if err := applyClusterRoleBinding(ctx, c, "triremeadm:cloud-controller-manager:auth-delegator", "system:auth-delegator", subject); err != nil {
		return err
	}
	b := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "triremeadm:cloud-controller-manager:authentication-reader", Namespace: metav1.NamespaceSystem},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
		Subjects:   []rbacv1.Subject{subject},
	}
	bindings := c.RbacV1().RoleBindings(metav1.NamespaceSystem)
	return createOrUpdate(ctx, bindings, b, "rolebinding", b.Namespace+"/"+b.Name)
}
