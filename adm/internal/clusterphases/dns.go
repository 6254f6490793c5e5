package clusterphases

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// DNS object names, as kubeadm names CoreDNS's: the Deployment, ConfigMap and
// ServiceAccount coredns, the Service kube-dns.
const (
	DNSName        = "coredns"
	DNSServiceName = "kube-dns"
)

// DNSInputs are what the DNS addon depends on.
type DNSInputs struct {
	// Image is trireme.dev/coredns:<version>.
	Image string
	// ServiceIP is the 10th address of the service range (the kubelet's clusterDNS).
	ServiceIP string
	// Domain is the cluster's DNS domain.
	Domain string
	// Replicas of the Deployment.
	Replicas int32
}

// Corefile is kubeadm's Corefile for domain.
func Corefile(domain string) string {
	return fmt.Sprintf(`.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes %s in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}
`, domain)
}

// DNSDeployment runs CoreDNS as kubeadm does, with NET_BIND_SERVICE,
// liveness on health's :8080/health, readiness on ready's :8181/ready.
func DNSDeployment(in DNSInputs) *appsv1.Deployment {
	labels := map[string]string{"k8s-app": DNSServiceName}
	port := func(name string, p int32, proto corev1.Protocol) corev1.ContainerPort {
		return corev1.ContainerPort{Name: name, ContainerPort: p, Protocol: proto}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: DNSName, Namespace: metav1.NamespaceSystem, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(in.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: DNSName,
					PriorityClassName:  "system-cluster-critical",
					DNSPolicy:          corev1.DNSDefault,
					NodeSelector:       map[string]string{corev1.LabelOSStable: "linux"},
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Key: ControlPlaneLabel, Effect: corev1.TaintEffectNoSchedule},
					},
					Containers: []corev1.Container{{
						Name:            DNSName,
						Image:           in.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            []string{"-conf", "/etc/coredns/Corefile"},
						Ports:           []corev1.ContainerPort{port("dns", 53, corev1.ProtocolUDP), port("dns-tcp", 53, corev1.ProtocolTCP), port("metrics", 9153, corev1.ProtocolTCP)},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: mustQuantity("100m"), corev1.ResourceMemory: mustQuantity("70Mi")}},
						LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
							Path: "/health", Port: intstr.FromInt32(8080)}}, InitialDelaySeconds: 60, TimeoutSeconds: 5, FailureThreshold: 5},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
							Path: "/ready", Port: intstr.FromInt32(8181)}}, PeriodSeconds: 1},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							// kubeadm also drops ALL; with the Trireme kubelet on
							// containerd 1.6 that leaves CoreDNS unable to bind :53
							// ("permission denied"), so the runtime's defaults stay.
							Capabilities:           &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}},
							ReadOnlyRootFilesystem: ptr.To(true),
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "config-volume", MountPath: "/etc/coredns", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "config-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: DNSName}}}}},
				},
			},
		},
	}
}

// DNSService is kube-dns at the cluster DNS address.
func DNSService(in DNSInputs) *corev1.Service {
	p := func(name string, port int32, proto corev1.Protocol) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: port, Protocol: proto, TargetPort: intstr.FromInt32(port)}
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: DNSServiceName, Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{"k8s-app": DNSServiceName, "kubernetes.io/name": "CoreDNS"}},
		Spec: corev1.ServiceSpec{
			ClusterIP: in.ServiceIP,
			Selector:  map[string]string{"k8s-app": DNSServiceName},
			Ports:     []corev1.ServicePort{p("dns", 53, corev1.ProtocolUDP), p("dns-tcp", 53, corev1.ProtocolTCP), p("metrics", 9153, corev1.ProtocolTCP)},
		},
	}
}

// DNSAddon installs CoreDNS: RBAC (system:coredns), the Corefile, the Deployment
// and the kube-dns Service.
func DNSAddon(ctx context.Context, c kubernetes.Interface, in DNSInputs) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: DNSName, Namespace: metav1.NamespaceSystem}}
	if _, err := c.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create serviceaccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		},
	}
	if err := applyClusterRole(ctx, c, role); err != nil {
		return err
	}
	if err := applyClusterRoleBinding(ctx, c, "system:coredns", "system:coredns",
		rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: DNSName, Namespace: metav1.NamespaceSystem}); err != nil {
		return err
	}
	if err := applyConfigMap(ctx, c, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: DNSName, Namespace: metav1.NamespaceSystem},
		Data:       map[string]string{"Corefile": Corefile(in.Domain)},
	}); err != nil {
		return err
	}
	d := DNSDeployment(in)
	deployments := c.AppsV1().Deployments(d.Namespace)
	if _, err := deployments.Create(ctx, d, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
		if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update deployment %s/%s: %w", d.Namespace, d.Name, err)
		}
	}
	svc := DNSService(in)
	if _, err := c.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	return nil
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
