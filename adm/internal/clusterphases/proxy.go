package clusterphases

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// ProxyName names the proxy addon's ServiceAccount, ConfigMap and DaemonSet in
// kube-system, as kubeadm names kube-proxy's.
const ProxyName = "kube-proxy"

// ProxyInputs are what the proxy addon depends on.
type ProxyInputs struct {
	// Image is the proxy's image (trireme.dev/trireme-proxy:<version>).
	Image string
	// Server is the control plane's URL: the proxy cannot reach the
	// kubernetes Service before it has programmed it, so it talks to the
	// apiserver directly, as kube-proxy does under kubeadm.
	Server string
	// ClusterCIDR is the pod network (masquerade decisions).
	ClusterCIDR string
	// Mode is nftables or iptables.
	Mode string
}

// ProxyConfigMap is kubeadm's kube-proxy ConfigMap: a KubeProxyConfiguration and
// a kubeconfig that authenticates with the pod's service account token.
func ProxyConfigMap(in ProxyInputs) *corev1.ConfigMap {
	config := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: %s
clusterCIDR: %s
clientConnection:
  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
`, in.Mode, in.ClusterCIDR)
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: default
  cluster:
    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
    server: %s
contexts:
- name: default
  context:
    cluster: default
    namespace: default
    user: default
current-context: default
users:
- name: default
  user:
    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
`, in.Server)
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ProxyName, Namespace: metav1.NamespaceSystem, Labels: map[string]string{"app": ProxyName}},
		Data:       map[string]string{"config.conf": config, "kubeconfig.conf": kubeconfig},
	}
}

// ProxyDaemonSet runs trireme-proxy on every node: host network, privileged (it
// programs the node's nftables or iptables), tolerating every taint. Unlike
// kube-proxy's it mounts no /lib/modules: it loads no kernel modules, and some
// hosts (these VMs) have no such directory.
func ProxyDaemonSet(in ProxyInputs) *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": ProxyName}
	hostPath := func(name, path string, t corev1.HostPathType) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &t}}}
	}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: ProxyName, Namespace: metav1.NamespaceSystem, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: ProxyName,
					HostNetwork:        true,
					PriorityClassName:  "system-node-critical",
					NodeSelector:       map[string]string{corev1.LabelOSStable: "linux"},
					Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name:            ProxyName,
						Image:           in.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"/usr/local/bin/trireme-proxy", "--config=/var/lib/kube-proxy/config.conf", "--kubeconfig=/var/lib/kube-proxy/kubeconfig.conf", "--hostname-override=$(NODE_NAME)"},
						Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}}},
						SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "kube-proxy", MountPath: "/var/lib/kube-proxy"},
							{Name: "xtables-lock", MountPath: "/run/xtables.lock"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "kube-proxy", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: ProxyName}}}},
						hostPath("xtables-lock", "/run/xtables.lock", corev1.HostPathFileOrCreate),
					},
				},
			},
		},
	}
}

// ProxyAddon installs the proxy: its ServiceAccount bound to system:node-proxier,
// its ConfigMap and its DaemonSet.
func ProxyAddon(ctx context.Context, c kubernetes.Interface, in ProxyInputs) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ProxyName, Namespace: metav1.NamespaceSystem}}
	if _, err := c.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create serviceaccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	if err := applyClusterRoleBinding(ctx, c, "kubeadm:node-proxier", "system:node-proxier",
		rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: ProxyName, Namespace: metav1.NamespaceSystem}); err != nil {
		return err
	}
	if err := applyConfigMap(ctx, c, ProxyConfigMap(in)); err != nil {
		return err
	}
	ds := ProxyDaemonSet(in)
	api := c.AppsV1().DaemonSets(ds.Namespace)
	if _, err := api.Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
		}
		if _, err := api.Update(ctx, ds, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
		}
	}
	return nil
}
