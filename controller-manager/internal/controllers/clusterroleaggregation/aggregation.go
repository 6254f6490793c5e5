// Package clusterroleaggregation is the controller that fills the rules of
// every ClusterRole with an aggregationRule with the union of the rules of
// the ClusterRoles its selectors match (how admin, edit and view grow when
// a CRD's roles carry the aggregate-to-* labels).
package clusterroleaggregation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "clusterrole-aggregation"

// GroupVersion is the API the controller needs; the manager skips the
// controller while the apiserver does not serve it.
var GroupVersion = rbacv1.SchemeGroupVersion

// Options configure the controller; every field is required.
type Options struct {
	// Client writes the aggregated ClusterRoles.
	Client kubernetes.Interface
	// ClusterRoles is the shared ClusterRole informer; New registers its
	// handlers.
	ClusterRoles rbacinformers.ClusterRoleInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
}

// Controller aggregates ClusterRole rules. Its queue holds the names of
// ClusterRoles with an aggregationRule.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	roles    rbaclisters.ClusterRoleLister
	synced   cache.InformerSynced
	loop     *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{
		client:   o.Client,
		recorder: o.Recorder,
		roles:    o.ClusterRoles.Lister(),
		synced:   o.ClusterRoles.Informer().HasSynced,
	}
	c.loop = worker.New(Name, c.sync)
	// Any ClusterRole's labels or rules may change what any aggregated role
	// should hold, so every change queues every aggregated role; the queue
	// folds the repeats.
	all := func(any) { c.enqueueAggregated() }
	if _, err := o.ClusterRoles.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    all,
		UpdateFunc: func(_, obj any) { all(obj) },
		DeleteFunc: all,
	}); err != nil {
		return nil, fmt.Errorf("watch clusterroles: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced)
}

func (c *Controller) enqueueAggregated() {
	roles, err := c.roles.List(labels.Everything())
	if err != nil {
		return
	}
	for _, r := range roles {
		if r.AggregationRule != nil {
			c.loop.Add(r.Name)
		}
	}
}

// sync sets the aggregated role's rules to the union, in role name order,
// of the rules of every other ClusterRole its selectors match.
func (c *Controller) sync(ctx context.Context, name string) error {
	role, err := c.roles.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get clusterrole %s: %w", name, err)
	}
	if role.AggregationRule == nil {
		return nil
	}
	want, err := c.aggregate(role)
	if err != nil {
		c.recorder.Eventf(role, corev1.EventTypeWarning, "InvalidAggregationRule", "%v", err)
		// A bad selector does not heal by retrying; the role's next edit
		// queues it again.
		return nil
	}
	if equality.Semantic.DeepEqual(want, role.Rules) {
		return nil
	}
	updated := role.DeepCopy()
	updated.Rules = want
	if _, err := c.client.RbacV1().ClusterRoles().Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			c.recorder.Eventf(role, corev1.EventTypeWarning, "FailedAggregation", "Error updating aggregated rules: %v", err)
		}
		return fmt.Errorf("update clusterrole %s: %w", name, err)
	}
	return nil
}

// aggregate computes the rules role should hold. Roles matched by several
// selectors count once; a rule already present is not repeated.
func (c *Controller) aggregate(role *rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	matched := map[string]*rbacv1.ClusterRole{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, fmt.Errorf("clusterRoleSelectors[%d]: %w", i, err)
		}
		found, err := c.roles.List(selector)
		if err != nil {
			return nil, fmt.Errorf("list clusterroles matching %s: %w", selector, err)
		}
		for _, r := range found {
			// A role never aggregates itself: its own rules are the output.
			if r.Name != role.Name {
				matched[r.Name] = r
			}
		}
	}
	sources := slices.SortedFunc(maps.Values(matched), func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	rules := []rbacv1.PolicyRule{}
	for _, r := range sources {
		for _, rule := range r.Rules {
			if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, rule) }) {
				rules = append(rules, rule)
			}
		}
	}
	return rules, nil
}
