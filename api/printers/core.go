package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

var podTemplateColumns = columns(
	nameCol(),
	col("Containers", typeString, "Names of each container in the template."),
	col("Images", typeString, "Images referenced by each container in the template."),
	col("Pod Labels", typeString, "The labels for the pod template."),
)

func podTemplateCells(t *corev1.PodTemplate, _ time.Time) []any {
	names, images := containerCells(t.Template.Spec.Containers)
	return []any{t.Name, names, images, labels.FormatLabels(t.Template.Labels)}
}

var replicationControllerColumns = columns(
	nameCol(),
	col("Desired", typeInteger, corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]),
	col("Current", typeInteger, corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]),
	col("Ready", typeInteger, corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]),
	ageCol(),
	wide("Containers", typeString, containersDoc),
	wide("Images", typeString, imagesDoc),
	wide("Selector", typeString, corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"]),
)

func replicationControllerCells(rc *corev1.ReplicationController, now time.Time) []any {
	var containers []corev1.Container
	if rc.Spec.Template != nil {
		containers = rc.Spec.Template.Spec.Containers
	}
	names, images := containerCells(containers)
	return []any{rc.Name, int64(deref(rc.Spec.Replicas)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), age(rc, now),
		names, images, labels.FormatLabels(rc.Spec.Selector)}
}

var serviceColumns = columns(
	nameCol(),
	col("Type", typeString, corev1.ServiceSpec{}.SwaggerDoc()["type"]),
	col("Cluster-IP", typeString, corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]),
	col("External-IP", typeString, corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]),
	col("Port(s)", typeString, corev1.ServiceSpec{}.SwaggerDoc()["ports"]),
	ageCol(),
	wide("Selector", typeString, corev1.ServiceSpec{}.SwaggerDoc()["selector"]),
)

func serviceCells(svc *corev1.Service, now time.Time) []any {
	clusterIP := none
	switch {
	case len(svc.Spec.ClusterIPs) > 0:
		clusterIP = svc.Spec.ClusterIPs[0]
	case svc.Spec.ClusterIP != "":
		clusterIP = svc.Spec.ClusterIP
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	// The table is always built wide, so load-balancer addresses are not
	// clipped (upstream clips them to 16 characters only for narrow output).
	return []any{svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), orNone(strings.Join(ports, ",")),
		age(svc, now), labels.FormatLabels(svc.Spec.Selector)}
}

// serviceExternalIP is what the EXTERNAL-IP column shows for each type.
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return none
	case corev1.ServiceTypeLoadBalancer:
		lb := loadBalancerAddresses(svc.Status.LoadBalancer.Ingress)
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(append(lb, svc.Spec.ExternalIPs...), ",")
		}
		if len(lb) > 0 {
			return strings.Join(lb, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return unknown
}

// loadBalancerAddresses returns the distinct IPs (or hostnames where there
// is no IP) of load-balancer ingress points, sorted.
func loadBalancerAddresses(ingress []corev1.LoadBalancerIngress) []string {
	seen := map[string]bool{}
	var out []string
	for _, in := range ingress {
		addr := in.IP
		if addr == "" {
			addr = in.Hostname
		}
		if addr != "" && !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out
}

var endpointsColumns = columns(
	nameCol(),
	col("Endpoints", typeString, corev1.Endpoints{}.SwaggerDoc()["subsets"]),
	ageCol(),
)

func endpointsCells(ep *corev1.Endpoints, now time.Time) []any {
	return []any{ep.Name, formatEndpoints(ep), age(ep, now)}
}

// formatEndpoints lists the first three address:port pairs (bare addresses
// for port-less subsets) and how many more there are.
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return none
	}
	const limit = 3
	var list []string
	total := 0
	add := func(s string) {
		total++
		if len(list) < limit {
			list = append(list, s)
		}
	}
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	if total > limit {
		return fmt.Sprintf("%s + %d more...", strings.Join(list, ","), total-limit)
	}
	return strings.Join(list, ",")
}

var nodeColumns = columns(
	nameCol(),
	col("Status", typeString, "The status of the node"),
	col("Roles", typeString, "The roles of the node"),
	ageCol(),
	col("Version", typeString, corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]),
	wide("Internal-IP", typeString, corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	wide("External-IP", typeString, corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	wide("OS-Image", typeString, corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]),
	wide("Kernel-Version", typeString, corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]),
	wide("Container-Runtime", typeString, corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]),
)

func nodeCells(node *corev1.Node, now time.Time) []any {
	// Only the Ready condition is shown; the last one of that type wins.
	var status []string
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = []string{string(c.Type)}
		} else {
			status = []string{"Not" + string(c.Type)}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	info := node.Status.NodeInfo
	unknownIfEmpty := func(s string) string {
		if s == "" {
			return unknown
		}
		return s
	}
	return []any{node.Name, strings.Join(status, ","), orNone(strings.Join(nodeRoles(node), ",")), age(node, now), info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
		unknownIfEmpty(info.OSImage), unknownIfEmpty(info.KernelVersion), unknownIfEmpty(info.ContainerRuntimeVersion)}
}

// Node role labels: node-role.kubernetes.io/<role> (any value) and the older
// kubernetes.io/role=<role>.
const (
	nodeRolePrefix = "node-role.kubernetes.io/"
	nodeRoleLabel  = "kubernetes.io/role"
)

// nodeRoles returns the sorted, distinct roles named by a node's labels.
func nodeRoles(node *corev1.Node) []string {
	set := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, nodeRolePrefix):
			if role := strings.TrimPrefix(k, nodeRolePrefix); role != "" {
				set[role] = true
			}
		case k == nodeRoleLabel && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

// nodeAddress returns the node's first address of type t, or "<none>".
func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return none
}

var namespaceColumns = columns(
	nameCol(),
	col("Status", typeString, "The status of the namespace"),
	ageCol(),
)

func namespaceCells(ns *corev1.Namespace, now time.Time) []any {
	return []any{ns.Name, string(ns.Status.Phase), age(ns, now)}
}

var configMapColumns = columns(
	nameCol(),
	col("Data", typeString, corev1.ConfigMap{}.SwaggerDoc()["data"]),
	ageCol(),
)

func configMapCells(cm *corev1.ConfigMap, now time.Time) []any {
	return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm, now)}
}

var secretColumns = columns(
	nameCol(),
	col("Type", typeString, corev1.Secret{}.SwaggerDoc()["type"]),
	col("Data", typeString, corev1.Secret{}.SwaggerDoc()["data"]),
	ageCol(),
)

func secretCells(s *corev1.Secret, now time.Time) []any {
	// stringData is merged into data on write, so only data is counted.
	return []any{s.Name, string(s.Type), int64(len(s.Data)), age(s, now)}
}

var serviceAccountColumns = columns(
	nameCol(),
	col("Secrets", typeString, corev1.ServiceAccount{}.SwaggerDoc()["secrets"]),
	ageCol(),
)

func serviceAccountCells(sa *corev1.ServiceAccount, now time.Time) []any {
	return []any{sa.Name, int64(len(sa.Secrets)), age(sa, now)}
}

var persistentVolumeColumns = columns(
	nameCol(),
	col("Capacity", typeString, corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]),
	col("Access Modes", typeString, corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]),
	col("Reclaim Policy", typeString, corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]),
	col("Status", typeString, corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]),
	col("Claim", typeString, corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]),
	col("StorageClass", typeString, "StorageClass of the pv"),
	col("VolumeAttributesClass", typeString, "VolumeAttributesClass of the pv"),
	col("Reason", typeString, corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]),
	ageCol(),
	wide("VolumeMode", typeString, corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]),
)

// betaStorageClassAnnotation predates spec.storageClassName and still wins
// over it when present.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

func persistentVolumeCells(pv *corev1.PersistentVolume, now time.Time) []any {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class, ok := pv.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = pv.Spec.StorageClassName
	}
	capacity := pv.Spec.Capacity[corev1.ResourceStorage]
	return []any{pv.Name, capacity.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, stringOr(pv.Spec.VolumeAttributesClassName, unset), pv.Status.Reason, age(pv, now),
		stringOr((*string)(pv.Spec.VolumeMode), unset)}
}

var persistentVolumeClaimColumns = columns(
	nameCol(),
	col("Status", typeString, corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]),
	col("Volume", typeString, corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]),
	col("Capacity", typeString, corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]),
	col("Access Modes", typeString, corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]),
	col("StorageClass", typeString, "StorageClass of the pvc"),
	col("VolumeAttributesClass", typeString, "VolumeAttributesClass of the pvc"),
	ageCol(),
	wide("VolumeMode", typeString, corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]),
)

func persistentVolumeClaimCells(pvc *corev1.PersistentVolumeClaim, now time.Time) []any {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	// Capacity and modes are those of the bound volume, so only shown once bound.
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModes(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	class, ok := pvc.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = deref(pvc.Spec.StorageClassName)
	}
	return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class,
		stringOr(pvc.Spec.VolumeAttributesClassName, unset), age(pvc, now), stringOr((*string)(pvc.Spec.VolumeMode), unset)}
}

// accessModes abbreviates access modes in a fixed order, without repeats.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	has := map[corev1.PersistentVolumeAccessMode]bool{}
	for _, m := range modes {
		has[m] = true
	}
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"},
		{corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"},
		{corev1.ReadWriteOncePod, "RWOP"},
	} {
		if has[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// stringOr returns *p, or fallback when p is nil.
func stringOr(p *string, fallback string) string {
	if p == nil {
		return fallback
	}
	return *p
}

var resourceQuotaColumns = columns(
	nameCol(),
	col("Request", typeString, "Request represents a minimum amount of cpu/memory that a container may consume."),
	col("Limit", typeString, "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
	ageCol(),
)

func resourceQuotaCells(q *corev1.ResourceQuota, now time.Time) []any {
	names := make([]string, 0, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var requests, limits []string
	for _, name := range names {
		used := q.Status.Used[corev1.ResourceName(name)]
		hard := q.Status.Hard[corev1.ResourceName(name)]
		entry := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if prefix, _, found := strings.Cut(name, "."); found && prefix == "limits" {
			limits = append(limits, entry)
		} else {
			requests = append(requests, entry)
		}
	}
	return []any{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), age(q, now)}
}
