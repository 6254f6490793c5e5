package bootstrappolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// ControllerRolePrefix starts the name of each controller's ClusterRole;
// the rest is the name of the service account, in kube-system, that the
// controller-manager runs that controller as when it uses service account
// credentials.
const ControllerRolePrefix = "system:controller:"

// controllerRoles lists each controller's permissions, keyed by its
// service account's name.
func controllerRoles() map[string][]rule {
	scaleAny := allow("get").in("*").on("*/scale")
	return map[string][]rule{
		"attachdetach-controller": {
			allow("list", "watch").in(core).on("persistentvolumes", "persistentvolumeclaims"),
			allow(read...).in(core).on("nodes"),
			allow("patch", "update").in(core).on("nodes/status"),
			allow("list", "watch").in(core).on("pods"),
			eventsRule(),
			allow("get", "create", "delete", "list", "watch").in(storage).on("volumeattachments"),
			allow(read...).in(storage).on("csidrivers"),
			allow(read...).in(storage).on("csinodes"),
		},
		"clusterrole-aggregation-controller": {
			// It writes any rule into aggregated roles, so it may escalate.
			allow("escalate", "get", "list", "watch", "update", "patch").in(rbac).on("clusterroles"),
		},
		"cronjob-controller": {
			allow("get", "list", "watch", "update").in(batch).on("cronjobs"),
			allow("get", "list", "watch", "create", "update", "delete", "patch").in(batch).on("jobs"),
			allow("update").in(batch).on("cronjobs/status"),
			allow("update").in(batch).on("cronjobs/finalizers"),
			allow("list", "watch", "delete").in(core).on("pods"),
			eventsRule(),
		},
		"daemon-set-controller": {
			allow(read...).in(extensions, apps).on("daemonsets"),
			allow("update").in(extensions, apps).on("daemonsets/status"),
			allow("update").in(extensions, apps).on("daemonsets/finalizers"),
			allow("list", "watch").in(core).on("nodes"),
			allow("list", "watch", "create", "delete", "patch").in(core).on("pods"),
			allow("create").in(core).on("pods/binding"),
			allow("get", "list", "watch", "create", "delete", "update", "patch").in(apps).on("controllerrevisions"),
			eventsRule(),
		},
		"deployment-controller": {
			allow("get", "list", "watch", "update").in(extensions, apps).on("deployments"),
			allow("update").in(extensions, apps).on("deployments/status"),
			allow("update").in(extensions, apps).on("deployments/finalizers"),
			allow("get", "list", "watch", "create", "update", "patch", "delete").in(apps, extensions).on("replicasets"),
			allow("get", "list", "watch", "update").in(core).on("pods"),
			eventsRule(),
		},
		"disruption-controller": {
			allow(read...).in(extensions, apps).on("deployments"),
			allow(read...).in(apps, extensions).on("replicasets"),
			allow(read...).in(core).on("replicationcontrollers"),
			allow(read...).in(policy).on("poddisruptionbudgets"),
			allow(read...).in(apps).on("statefulsets"),
			allow("update").in(policy).on("poddisruptionbudgets/status"),
			allow("patch", "update").in(core).on("pods/status"),
			scaleAny,
			eventsRule(),
		},
		"endpoint-controller": {
			allow(read...).in(core).on("services", "pods"),
			allow("get", "list", "watch", "create", "update", "delete").in(core).on("endpoints"),
			allow("create").in(core).on("endpoints/restricted"),
			eventsRule(),
		},
		"endpointslice-controller": {
			allow(read...).in(core).on("services", "pods", "nodes"),
			// Owning a slice with blockOwnerDeletion needs the Service's finalizers.
			allow("update").in(core).on("services/finalizers"),
			allow("get", "list", "watch", "create", "update", "delete").in(discovery).on("endpointslices"),
			eventsRule(),
		},
		"endpointslicemirroring-controller": {
			allow(read...).in(core).on("services", "endpoints"),
			allow("update").in(core).on("services/finalizers"),
			allow("update").in(core).on("endpoints/finalizers"),
			allow("get", "list", "watch", "create", "update", "delete").in(discovery).on("endpointslices"),
			eventsRule(),
		},
		"expand-controller": {
			allow("get", "list", "watch", "update", "patch").in(core).on("persistentvolumes"),
			allow("update", "patch").in(core).on("persistentvolumeclaims/status"),
			allow(read...).in(core).on("persistentvolumeclaims"),
			eventsRule(),
			allow("get").in(core).on("services"),
		},
		"ephemeral-volume-controller": {
			allow(read...).in(core).on("pods"),
			allow("update").in(core).on("pods/finalizers"),
			allow("get", "list", "watch", "create").in(core).on("persistentvolumeclaims"),
			eventsRule(),
		},
		"resource-claim-controller": {
			allow(read...).in(core).on("pods"),
			allow("update").in(core).on("pods/finalizers"),
			allow("get", "list", "watch", "create", "delete").in(resource).on("resourceclaims"),
			allow("update", "patch").in(resource).on("resourceclaims", "resourceclaims/status"),
			allow("update", "patch").in(core).on("pods/status"),
			eventsRule(),
		},
		"generic-garbage-collector": {
			allow("get", "list", "watch", "patch", "update", "delete").in("*").on("*"),
			eventsRule(),
		},
		"horizontal-pod-autoscaler": {
			allow(read...).in(autoscaling).on("horizontalpodautoscalers"),
			allow("update").in(autoscaling).on("horizontalpodautoscalers/status"),
			allow("get", "update").in("*").on("*/scale"),
			allow("list", "watch").in(core).on("pods"),
			allow("list", "watch").in(metrics).on("pods"),
			allow(read...).in(customMetrics).on("*"),
			allow(read...).in(externalMetric).on("*"),
			eventsRule(),
		},
		"job-controller": {
			allow("get", "list", "watch", "update", "patch").in(batch).on("jobs"),
			allow("update").in(batch).on("jobs/status"),
			allow("update").in(batch).on("jobs/finalizers"),
			allow("list", "watch", "create", "delete", "patch").in(core).on("pods"),
			eventsRule(),
		},
		"namespace-controller": {
			allow("get", "list", "watch", "delete").in(core).on("namespaces"),
			allow("update").in(core).on("namespaces/finalize", "namespaces/status"),
			allow("get", "list", "watch", "delete", "deletecollection").in("*").on("*"),
		},
		"node-controller": {
			allow("get", "list", "watch", "update", "delete", "patch").in(core).on("nodes"),
			allow("patch", "update").in(core).on("nodes/status"),
			allow("patch", "update").in(core).on("pods/status"),
			allow("list", "watch", "get", "delete").in(core).on("pods"),
			eventsRule(),
		},
		"persistent-volume-binder": {
			allow("get", "list", "watch", "update", "create", "delete").in(core).on("persistentvolumes"),
			allow("update").in(core).on("persistentvolumes/status"),
			allow("get", "list", "watch", "update").in(core).on("persistentvolumeclaims"),
			allow("update").in(core).on("persistentvolumeclaims/status"),
			allow("list", "watch", "get", "create", "delete").in(core).on("pods"),
			allow(read...).in(storage).on("storageclasses"),
			allow("list", "watch").in(core).on("nodes"),
			eventsRule(),
			// The recycler watches its pod's events.
			allow("watch").in(core).on("events"),
			allow("get").in(core).on("services"),
		},
		"pod-garbage-collector": {
			allow("list", "watch", "delete").in(core).on("pods"),
			allow(read...).in(core).on("nodes"),
			allow("patch").in(core).on("pods/status"),
			// Beyond upstream: Trireme's collector records a Warning when
			// it cannot mark a pod Failed.
			eventsRule(),
		},
		"replicaset-controller": {
			allow("get", "list", "watch", "update").in(apps, extensions).on("replicasets"),
			allow("update").in(apps, extensions).on("replicasets/status"),
			allow("update").in(apps, extensions).on("replicasets/finalizers"),
			allow("list", "watch", "patch", "create", "delete").in(core).on("pods"),
			eventsRule(),
		},
		"replication-controller": {
			allow("get", "list", "watch", "update").in(core).on("replicationcontrollers"),
			allow("update").in(core).on("replicationcontrollers/status"),
			allow("update").in(core).on("replicationcontrollers/finalizers"),
			allow("list", "watch", "patch", "create", "delete").in(core).on("pods"),
			eventsRule(),
		},
		"resourcequota-controller": {
			// Quota may count any resource.
			allow("list", "watch").in("*").on("*"),
			allow("update").in(core).on("resourcequotas/status"),
			eventsRule(),
		},
		"route-controller": {
			allow("list", "watch").in(core).on("nodes"),
			allow("patch").in(core).on("nodes/status"),
			eventsRule(),
		},
		"service-account-controller": {
			allow("create").in(core).on("serviceaccounts"),
			eventsRule(),
		},
		"service-controller": {
			allow(read...).in(core).on("services"),
			allow("patch", "update").in(core).on("services/status"),
			allow("list", "watch").in(core).on("nodes"),
			eventsRule(),
		},
		"service-cidrs-controller": {
			allow("get", "list", "watch", "patch", "update").in(networking).on("servicecidrs"),
			allow("patch", "update").in(networking).on("servicecidrs/finalizers"),
			allow("patch", "update").in(networking).on("servicecidrs/status"),
			allow(read...).in(networking).on("ipaddresses"),
			eventsRule(),
		},
		"statefulset-controller": {
			allow("list", "watch").in(core).on("pods"),
			allow(read...).in(apps).on("statefulsets"),
			allow("update").in(apps).on("statefulsets/status"),
			allow("update").in(apps).on("statefulsets/finalizers"),
			allow("get", "create", "delete", "update", "patch").in(core).on("pods"),
			allow("get", "create", "delete", "update", "patch", "list", "watch").in(apps).on("controllerrevisions"),
			allow("get", "create", "list", "watch").in(core).on("persistentvolumeclaims"),
			allow("update", "delete").in(core).on("persistentvolumeclaims"),
			allow("update").in(core).on("pods/finalizers"),
			eventsRule(),
		},
		"ttl-controller": {
			allow("update", "patch", "list", "watch").in(core).on("nodes"),
			eventsRule(),
		},
		"certificate-controller": {
			allow("get", "list", "watch", "delete").in(certificates).on("certificatesigningrequests"),
			allow("update").in(certificates).on("certificatesigningrequests/status", "certificatesigningrequests/approval"),
			// kubelet-serving: Trireme's approver also approves a node's own
			// serving certificate, which upstream leaves to an administrator.
			allow("approve").in(certificates).on("signers").named("kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving"),
			allow("sign").in(certificates).on("signers").named("kubernetes.io/legacy-unknown",
				"kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving"),
			allow("create").in(authorization).on("subjectaccessreviews"),
			eventsRule(),
		},
		"pvc-protection-controller": {
			allow("get", "list", "watch", "update").in(core).on("persistentvolumeclaims"),
			allow("list", "watch", "get").in(core).on("pods"),
			eventsRule(),
		},
		"pv-protection-controller": {
			allow("get", "list", "watch", "update").in(core).on("persistentvolumes"),
			eventsRule(),
		},
		"volumeattributesclass-protection-controller": {
			allow("list", "watch", "get").in(core).on("persistentvolumeclaims"),
			allow("list", "watch", "get").in(core).on("persistentvolumes"),
			allow("get", "list", "watch", "update").in(storage).on("volumeattributesclasses"),
			eventsRule(),
		},
		"ttl-after-finished-controller": {
			allow("get", "list", "watch", "delete").in(batch).on("jobs"),
			eventsRule(),
		},
		// Lists any resource for the point a migration starts from and
		// patches its objects to rewrite them.
		"storage-version-migrator-controller": {
			allow("list", "patch").in("*").on("*"),
			allow("get").in("apiextensions.k8s.io").on("customresourcedefinitions"),
			allow("patch").in("apiextensions.k8s.io").on("customresourcedefinitions/status"),
			allow("update").in("storagemigration.k8s.io").on("storageversionmigrations/status"),
			eventsRule(),
		},
		// Trireme's own: it reads Ingresses, Services and Secrets' metadata
		// through the controller-manager's shared informers and only
		// records Events.
		"ingress-references-controller": {
			eventsRule(),
		},
		// Trireme's own: it reads Ingresses, IngressClasses and Services
		// through the shared informers and writes the Ingresses' status.
		"ingress-status-controller": {
			allow("update").in("networking.k8s.io").on("ingresses/status"),
			eventsRule(),
		},
		"root-ca-cert-publisher": {
			allow("create", "update").in(core).on("configmaps"),
			eventsRule(),
		},
		"validatingadmissionpolicy-status-controller": {
			allow(read...).in(admissionReg).on("validatingadmissionpolicies"),
			allow("get", "patch", "update").in(admissionReg).on("validatingadmissionpolicies/status"),
			eventsRule(),
		},
		"legacy-service-account-token-cleaner": {
			allow("get").in(core).on("configmaps").named("kube-apiserver-legacy-service-account-token-tracking"),
			allow("patch", "delete").in(core).on("secrets"),
		},
		"selinux-warning-controller": {
			eventsRule(),
			allow(read...).in(core).on("persistentvolumes"),
			allow(read...).in(core).on("persistentvolumeclaims"),
			allow(read...).in(core).on("pods"),
			allow(read...).in(storage).on("csidrivers"),
		},
	}
}

// ControllerRoles returns one ClusterRole per controller, sorted by name.
func ControllerRoles() []rbacv1.ClusterRole {
	var out []rbacv1.ClusterRole
	for _, name := range sortedKeys(controllerRoles()) {
		out = append(out, clusterRole(ControllerRolePrefix+name, controllerRoles()[name]...))
	}
	return out
}

// ControllerRoleBindings binds each controller's role to its service account
// in kube-system.
func ControllerRoleBindings() []rbacv1.ClusterRoleBinding {
	var out []rbacv1.ClusterRoleBinding
	for _, name := range sortedKeys(controllerRoles()) {
		out = append(out, clusterBinding(ControllerRolePrefix+name, []rbacv1.Subject{serviceAccount("kube-system", name)}))
	}
	return out
}
