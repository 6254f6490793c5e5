package bootstrappolicy

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// controllerManagerAccounts maps each controller trireme-controller-manager
// runs (its --controllers name, upstream's) to the ServiceAccount in kube-system it acts
// as with --use-service-account-credentials. The apiserver module cannot
// import the controller-manager's registry
// (controller-manager/internal/controllers/list*.go), so this list is kept
// by hand: add a line here whenever a controller joins that registry. The
// workload controllers are listed ahead of their arrival, under upstream's
// account names.
var controllerManagerAccounts = map[string]string{
	"serviceaccount":                      "service-account-controller",
	"root-ca-cert-publisher":              "root-ca-cert-publisher",
	"resourcequota":                       "resourcequota-controller",
	"clusterrole-aggregation":             "clusterrole-aggregation-controller",
	"endpoint":                            "endpoint-controller",
	"endpointslice":                       "endpointslice-controller",
	"endpointslicemirroring":              "endpointslicemirroring-controller",
	"namespace":                           "namespace-controller",
	"garbagecollector":                    "generic-garbage-collector",
	"disruption":                          "disruption-controller",
	"podgc":                               "pod-garbage-collector",
	"nodelifecycle":                       "node-controller",
	"taint-eviction-controller":           "node-controller",
	"nodeipam":                            "node-controller",
	"csrapproving":                        "certificate-controller",
	"csrsigning":                          "certificate-controller",
	"bootstrapsigner":                     "bootstrap-signer",
	"tokencleaner":                        "token-cleaner",
	"persistentvolume-binder":             "persistent-volume-binder",
	"pvc-protection":                      "pvc-protection-controller",
	"pv-protection":                       "pv-protection-controller",
	"ephemeral-volume":                    "ephemeral-volume-controller",
	"horizontalpodautoscaling":            "horizontal-pod-autoscaler",
	"deployment":                          "deployment-controller",
	"replicaset":                          "replicaset-controller",
	"replicationcontroller":               "replication-controller",
	"statefulset":                         "statefulset-controller",
	"daemonset":                           "daemon-set-controller",
	"job":                                 "job-controller",
	"cronjob":                             "cronjob-controller",
	"ttl-after-finished":                  "ttl-after-finished-controller",
	"storage-version-migrator-controller": "storage-version-migrator-controller",
	"ingress-references":                  "ingress-references-controller",
	"ingress-status":                      "ingress-status-controller",
}

// namespacedControllerRoles are the controllers whose roles upstream grants
// only in some namespaces (Roles, not a ClusterRole).
var namespacedControllerRoles = map[string][]string{
	"bootstrap-signer": {"kube-system", "kube-public"},
	"token-cleaner":    {"kube-system"},
}

func TestEveryControllerHasARole(t *testing.T) {
	p := Default()
	clusterRoles := map[string]bool{}
	for _, r := range p.ClusterRoles {
		clusterRoles[r.Name] = len(r.Rules) > 0
	}
	clusterBound := map[string]bool{}
	for _, b := range p.ClusterRoleBindings {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == "kube-system" && b.RoleRef.Name == ControllerRolePrefix+s.Name {
				clusterBound[s.Name] = true
			}
		}
	}
	namespaceBound := func(ns, account string) bool {
		roleOK := false
		for _, r := range NamespaceRoles()[ns] {
			if r.Name == ControllerRolePrefix+account && len(r.Rules) > 0 {
				roleOK = true
			}
		}
		for _, b := range NamespaceRoleBindings()[ns] {
			for _, s := range b.Subjects {
				if roleOK && b.RoleRef.Kind == "Role" && b.RoleRef.Name == ControllerRolePrefix+account &&
					s.Kind == rbacv1.ServiceAccountKind && s.Namespace == "kube-system" && s.Name == account {
					return true
				}
			}
		}
		return false
	}
	for controller, account := range controllerManagerAccounts {
		t.Run(controller, func(t *testing.T) {
			if namespaces, ok := namespacedControllerRoles[account]; ok {
				for _, ns := range namespaces {
					if !namespaceBound(ns, account) {
						t.Errorf("no Role %s%s bound to kube-system/%s in %s", ControllerRolePrefix, account, account, ns)
					}
				}
				return
			}
			if !clusterRoles[ControllerRolePrefix+account] {
				t.Errorf("no ClusterRole %s%s with rules", ControllerRolePrefix, account)
			}
			if !clusterBound[account] {
				t.Errorf("ClusterRole %s%s not bound to ServiceAccount kube-system/%s", ControllerRolePrefix, account, account)
			}
		})
	}
}
