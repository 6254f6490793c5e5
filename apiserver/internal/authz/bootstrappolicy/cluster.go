package bootstrappolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// Labels by which the user-facing roles aggregate the permissions of
// other ClusterRoles (installed add-ons add theirs with the same labels).
const (
	aggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	aggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	aggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

// Well-known identities of the control plane.
const (
	mastersGroup          = "system:masters"
	nodesGroup            = "system:nodes"
	monitoringGroup       = "system:monitoring"
	authenticatedGroup    = "system:authenticated"
	unauthenticatedGroup  = "system:unauthenticated"
	serviceAccountsGroup  = "system:serviceaccounts"
	kubeProxyUser         = "system:kube-proxy"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	// AdminGroup is the group kubeadm-style admin credentials carry; it is
	// bound to cluster-admin rather than made a superuser.
	AdminGroup = "kubeadm:cluster-admins"
)

// NodeRules are the permissions every kubelet needs beyond those the node
// authorizer grants per object. The node authorizer applies them itself;
// the system:node ClusterRole carries them for clusters without it.
func NodeRules() []rbacv1.PolicyRule {
	return rules(
		// Non-mutating checks of tokens and access (webhook auth on :10250).
		allow("create").in(authentication).on("tokenreviews"),
		allow("create").in(authorization).on("subjectaccessreviews", "localsubjectaccessreviews"),
		// Service environment variables of pods.
		allow(read...).in(core).on("services"),
		// Registering and updating itself; NodeRestriction limits it to its own Node.
		allow("create", "get", "list", "watch").in(core).on("nodes"),
		allow("update", "patch").in(core).on("nodes/status"),
		allow("update", "patch", "delete").in(core).on("nodes"),
		allow("create", "update", "patch").in(core).on("events"),
		allow(read...).in(core).on("pods"),
		// Mirror pods of static pods.
		allow("create", "delete").in(core).on("pods"),
		allow("update", "patch").in(core).on("pods/status"),
		allow("create").in(core).on("pods/eviction"),
		// Per-object reads; the node authorizer narrows these to its pods' objects.
		allow("get").in(core).on("secrets", "configmaps"),
		allow("get").in(core).on("persistentvolumeclaims", "persistentvolumes"),
		allow("get", "update", "patch").in(core).on("persistentvolumeclaims/status"),
		allow("create").in(core).on("serviceaccounts/token"),
		// TLS bootstrap and certificate rotation.
		allow("create", "get", "list", "watch").in(certificates).on("certificatesigningrequests"),
		// clusterTrustBundle projected volumes.
		allow(read...).in(certificates).on("clustertrustbundles"),
		// podCertificate projected volumes: requests for the node's pods
		// (NodeRestriction checks them), naming the pod's service account
		// by UID; the node authorizer narrows both to the node's pods.
		allow("get", "list", "watch", "create").in(certificates).on("podcertificaterequests"),
		allow("get").in(core).on("serviceaccounts"),
		// Node heartbeats.
		allow("get", "create", "update", "patch", "delete").in(coordination).on("leases"),
		allow("get").in(storage).on("volumeattachments"),
		allow("get", "watch", "list").in(storage).on("csidrivers"),
		allow("get", "create", "update", "patch", "delete").in(storage).on("csinodes"),
		allow(read...).in(node).on("runtimeclasses"),
		// Dynamic resource allocation.
		allow("get").in(resource).on("resourceclaims"),
		allow(append(append([]string{}, read...), "create", "update", "patch", "delete", "deletecollection")...).in(resource).on("resourceslices"),
	)
}

// ClusterRoles are the default ClusterRoles other than the controllers'.
func ClusterRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		// The superuser role.
		clusterRole("cluster-admin",
			allow("*").in("*").on("*"),
			allow("*").urls("*"),
		),
		// Discovery and version negotiation, for every authenticated user.
		clusterRole("system:discovery",
			allow("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/",
				"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"),
		),
		// Health and metrics endpoints for monitoring agents.
		clusterRole("system:monitoring",
			allow("get").urls("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
				"/livez/*", "/readyz/*", "/healthz/*"),
		),
		// What a user may learn about themselves.
		clusterRole("system:basic-user",
			allow("create").in(authorization).on("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			allow("create").in(authentication).on("selfsubjectreviews"),
		),
		// Non-sensitive facts about the cluster, readable even anonymously.
		clusterRole("system:public-info-viewer",
			allow("get").urls("/livez", "/readyz", "/healthz", "/version", "/version/"),
		),
		labeled(aggregated("admin", aggregateToAdmin), nil),
		labeled(aggregated("edit", aggregateToEdit), map[string]string{aggregateToAdmin: "true"}),
		labeled(aggregated("view", aggregateToView), map[string]string{aggregateToEdit: "true"}),
		labeled(clusterRole("system:aggregate-to-admin",
			allow("create").in(authorization).on("localsubjectaccessreviews"),
			allow(readWrite...).in(rbac).on("roles", "rolebindings"),
		), map[string]string{aggregateToAdmin: "true"}),
		labeled(clusterRole("system:aggregate-to-edit", editRules()...), map[string]string{aggregateToEdit: "true"}),
		labeled(clusterRole("system:aggregate-to-view", viewRules()...), map[string]string{aggregateToView: "true"}),
		clusterRole("system:heapster",
			allow(read...).in(core).on("events", "pods", "nodes", "namespaces"),
			allow(read...).in(extensions).on("deployments"),
		),
		clusterRole("system:node", nodeRulesAsRules()...),
		clusterRole("system:node-problem-detector",
			allow("get").in(core).on("nodes"),
			allow("patch").in(core).on("nodes/status"),
			eventsRule(),
		),
		clusterRole("system:kubelet-api-admin",
			allow("get", "list", "watch").in(core).on("nodes"),
			allow("proxy").in(core).on("nodes"),
			allow("*").in(core).on("nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log", "nodes/pods", "nodes/healthz", "nodes/configz", "nodes/checkpoint"),
		),
		clusterRole("system:node-bootstrapper",
			allow("create", "get", "list", "watch").in(certificates).on("certificatesigningrequests"),
		),
		clusterRole("system:auth-delegator",
			allow("create").in(authentication).on("tokenreviews"),
			allow("create").in(authorization).on("subjectaccessreviews"),
		),
		clusterRole("system:kube-aggregator",
			allow(read...).in(core).on("services", "endpoints"),
		),
		clusterRole("system:kube-controller-manager",
			eventsRule(),
			// Leader election.
			allow("create").in(coordination).on("leases"),
			allow("get", "update").in(coordination).on("leases").named("kube-controller-manager"),
			allow("create").in(core).on("endpoints"),
			allow("get", "update").in(core).on("endpoints").named("kube-controller-manager"),
			// Service account credentials for each controller.
			allow("create").in(core).on("secrets", "serviceaccounts"),
			allow("delete").in(core).on("secrets"),
			allow("get").in(core).on("namespaces", "secrets", "serviceaccounts"),
			allow("update").in(core).on("secrets", "serviceaccounts"),
			allow("create").in(core).on("serviceaccounts/token"),
			// Delegated authentication and authorization of its own endpoints.
			allow("create").in(authentication).on("tokenreviews"),
			allow("create").in(authorization).on("subjectaccessreviews"),
			// Shared informers of every controller.
			allow("list", "watch").in("*").on("*"),
		),
		clusterRole("system:kube-dns",
			allow("list", "watch").in(core).on("endpoints", "services"),
			allow("list", "watch").in(discovery).on("endpointslices"),
		),
		clusterRole("system:persistent-volume-provisioner",
			allow("get", "list", "watch", "create", "delete").in(core).on("persistentvolumes"),
			allow("get", "list", "watch", "update").in(core).on("persistentvolumeclaims"),
			allow(read...).in(storage).on("storageclasses"),
			allow("watch").in(core).on("events"),
			eventsRule(),
		),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
			allow("create").in(certificates).on("certificatesigningrequests/nodeclient"),
		),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
			allow("create").in(certificates).on("certificatesigningrequests/selfnodeclient"),
		),
		clusterRole("system:certificates.k8s.io:kube-apiserver-client-approver",
			allow("approve").in(certificates).on("signers").named("kubernetes.io/kube-apiserver-client"),
		),
		clusterRole("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
			allow("approve").in(certificates).on("signers").named("kubernetes.io/kube-apiserver-client-kubelet"),
		),
		clusterRole("system:certificates.k8s.io:kubelet-serving-approver",
			allow("approve").in(certificates).on("signers").named("kubernetes.io/kubelet-serving"),
		),
		clusterRole("system:certificates.k8s.io:legacy-unknown-approver",
			allow("approve").in(certificates).on("signers").named("kubernetes.io/legacy-unknown"),
		),
		clusterRole("system:service-account-issuer-discovery",
			allow("get").urls("/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"),
		),
		clusterRole("system:node-proxier",
			allow("list", "watch").in(core).on("services", "endpoints"),
			allow(read...).in(core).on("nodes"),
			eventsRule(),
			allow("list", "watch").in(discovery).on("endpointslices"),
			allow("list", "watch").in(networking).on("servicecidrs"),
		),
		clusterRole("system:kube-scheduler", schedulerRules()...),
		clusterRole("system:volume-scheduler",
			allow("get", "list", "watch", "patch", "update").in(core).on("persistentvolumes"),
			allow(read...).in(storage).on("storageclasses"),
			allow("get", "list", "watch", "patch", "update").in(core).on("persistentvolumeclaims"),
		),
	}
}

// nodeRulesAsRules returns NodeRules in the builder's form for the
// system:node ClusterRole.
func nodeRulesAsRules() []rule {
	nr := NodeRules()
	out := make([]rule, len(nr))
	for i, r := range nr {
		out[i] = rule(r)
	}
	return out
}

func schedulerRules() []rule {
	return []rule{
		eventsRule(),
		// Leader election.
		allow("create").in(coordination).on("leases"),
		allow("get", "update").in(coordination).on("leases").named("kube-scheduler"),
		allow("create").in(core).on("endpoints"),
		allow("get", "update").in(core).on("endpoints").named("kube-scheduler"),
		// The scheduling cache.
		allow(read...).in(core).on("nodes"),
		allow(read...).in(core).on("namespaces"),
		allow("get", "list", "watch", "delete").in(core).on("pods"),
		allow("create").in(core).on("pods/binding", "bindings"),
		allow("patch", "update").in(core).on("pods/status"),
		allow(read...).in(core).on("replicationcontrollers", "services"),
		allow(read...).in(apps, extensions).on("replicasets"),
		allow(read...).in(apps).on("statefulsets"),
		allow(read...).in(policy).on("poddisruptionbudgets"),
		allow(read...).in(core).on("persistentvolumeclaims", "persistentvolumes"),
		// Delegated authentication and authorization of its own endpoints.
		allow("create").in(authentication).on("tokenreviews"),
		allow("create").in(authorization).on("subjectaccessreviews"),
		allow(read...).in(storage).on("csinodes", "csidrivers", "csistoragecapacities", "volumeattachments"),
		allow(read...).in(resource).on("resourceclaims", "deviceclasses", "resourceslices", "devicetaintrules"),
		allow("update", "patch").in(resource).on("resourceclaims", "resourceclaims/status"),
	}
}

// editRules are what edit adds to view: writes of the user workload kinds.
// Endpoints are left out since upstream found them usable to redirect
// other services' traffic.
func editRules() []rule {
	return []rule{
		allow("impersonate").in(core).on("serviceaccounts"),
		allow(write...).in(core).on("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
		allow("create").in(core).on("pods/eviction"),
		allow(write...).in(core).on("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events"),
		allow("create").in(core).on("serviceaccounts/token"),
		allow(write...).in(apps).on("statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
			"deployments/rollback", "replicasets", "replicasets/scale"),
		allow(write...).in(autoscaling).on("horizontalpodautoscalers"),
		allow(write...).in(batch).on("jobs", "cronjobs"),
		allow(write...).in(extensions).on("daemonsets", "deployments", "deployments/scale", "deployments/rollback",
			"ingresses", "replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies"),
		allow(write...).in(policy).on("poddisruptionbudgets"),
		allow(write...).in(networking).on("networkpolicies", "ingresses"),
		allow(write...).in(coordination).on("leases"),
		allow(write...).in(resource).on("resourceclaims", "resourceclaimtemplates"),
	}
}

// viewRules read the non-escalating namespaced kinds: not secrets, and
// not roles or bindings.
func viewRules() []rule {
	return []rule{
		allow(read...).in(core).on("pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
		allow(read...).in(core).on("limitranges", "resourcequotas", "bindings", "events",
			"pods/status", "resourcequotas/status", "namespaces/status", "replicationcontrollers/status", "pods/log"),
		// Reading namespaces at namespace scope means reading this one.
		allow(read...).in(core).on("namespaces"),
		allow(read...).in(discovery).on("endpointslices"),
		allow(read...).in(apps).on("controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
			"daemonsets", "daemonsets/status", "deployments", "deployments/status", "deployments/scale",
			"replicasets", "replicasets/status", "replicasets/scale"),
		allow(read...).in(autoscaling).on("horizontalpodautoscalers", "horizontalpodautoscalers/status"),
		allow(read...).in(batch).on("jobs", "jobs/status", "cronjobs", "cronjobs/status"),
		allow(read...).in(extensions).on("daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
			"ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status",
			"replicationcontrollers/scale", "networkpolicies"),
		allow(read...).in(policy).on("poddisruptionbudgets", "poddisruptionbudgets/status"),
		allow(read...).in(networking).on("ingresses", "ingresses/status", "networkpolicies"),
		allow(read...).in(coordination).on("leases"),
		allow(read...).in(resource).on("resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
		allow(read...).in(metrics).on("pods", "nodes"),
	}
}

// ClusterRoleBindings are the default bindings of ClusterRoles other than
// the controllers'.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return []rbacv1.ClusterRoleBinding{
		clusterBinding("cluster-admin", groups(mastersGroup)),
		clusterBinding("system:monitoring", groups(monitoringGroup)),
		clusterBinding("system:discovery", groups(authenticatedGroup)),
		clusterBinding("system:basic-user", groups(authenticatedGroup)),
		clusterBinding("system:public-info-viewer", groups(authenticatedGroup, unauthenticatedGroup)),
		clusterBinding("system:node-proxier", users(kubeProxyUser)),
		clusterBinding("system:kube-controller-manager", users(controllerManagerUser)),
		clusterBinding("system:kube-dns", []rbacv1.Subject{serviceAccount("kube-system", "kube-dns")}),
		clusterBinding("system:kube-scheduler", users(schedulerUser)),
		clusterBinding("system:volume-scheduler", users(schedulerUser)),
		// Kept without subjects: kubelets are authorized by the node
		// authorizer, which is stricter than this role.
		clusterBinding("system:node"),
		clusterBinding("system:service-account-issuer-discovery", groups(serviceAccountsGroup)),
		// What kubeadm adds: its admin.conf identity is a cluster-admin
		// that RBAC can still restrict.
		adminBinding(),
	}
}

func adminBinding() rbacv1.ClusterRoleBinding {
	b := clusterBinding("cluster-admin", groups(AdminGroup))
	b.Name = AdminGroup
	return b
}
