// Package nodeipam is the controller that gives each Node a pod CIDR (one
// per IP family in a dual-stack cluster) out of --cluster-cidr, in subnets
// of --node-cidr-mask-size. The allocations are re-derived from the Nodes
// at start, so a restart never hands out a subnet twice.
package nodeipam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "nodeipam"

// Options configure the controller and its allocator, from the node IPAM
// flags; fields that name no default are required.
type Options struct {
	// Client writes nodes' spec.podCIDRs.
	Client kubernetes.Interface
	// Nodes is the shared node informer; New registers its handlers.
	Nodes coreinformers.NodeInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// ClusterCIDRs is --cluster-cidr: one CIDR, or one of each family.
	ClusterCIDRs string
	// MaskSize is --node-cidr-mask-size (single stack); MaskSizeIPv4 and
	// MaskSizeIPv6 are the dual-stack flags. Zero means the default: 24
	// for IPv4, 64 for IPv6.
	MaskSize, MaskSizeIPv4, MaskSizeIPv6 int
	// ServiceCIDRs are never handed to nodes; nil means none.
	ServiceCIDRs []string
}

// Sets parses the options into one CIDRSet per cluster CIDR.
func (o Options) Sets() ([]*CIDRSet, error) {
	var prefixes []netip.Prefix
	for _, s := range strings.Split(o.ClusterCIDRs, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("--cluster-cidr %q: %w", s, err)
		}
		prefixes = append(prefixes, p)
	}
	switch {
	case len(prefixes) == 0:
		return nil, errors.New("--cluster-cidr is empty")
	case len(prefixes) > 2:
		return nil, fmt.Errorf("--cluster-cidr: at most two CIDRs, one per IP family, got %d", len(prefixes))
	case len(prefixes) == 2 && prefixes[0].Addr().Is4() == prefixes[1].Addr().Is4():
		return nil, errors.New("--cluster-cidr: two CIDRs must be of different IP families")
	}
	dual := len(prefixes) == 2
	var sets []*CIDRSet
	for _, p := range prefixes {
		mask := o.MaskSize
		if dual || mask == 0 {
			mask = o.MaskSizeIPv4
			if p.Addr().Is6() {
				mask = o.MaskSizeIPv6
			}
		}
		if mask == 0 {
			mask = 24
			if p.Addr().Is6() {
				mask = 64
			}
		}
		set, err := NewCIDRSet(p, mask)
		if err != nil {
			return nil, err
		}
		for _, svc := range o.ServiceCIDRs {
			if sp, err := netip.ParsePrefix(svc); err == nil {
				set.Occupy(sp)
			}
		}
		sets = append(sets, set)
	}
	return sets, nil
}

// Controller allocates pod CIDRs. Its queue holds node names.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	nodes    corelisters.NodeLister
	synced   cache.InformerSynced
	loop     *worker.Loop

	mu   sync.Mutex
	sets []*CIDRSet
	// owned maps each node to the CIDRs this process counts as its.
	owned map[string][]netip.Prefix
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	sets, err := o.Sets()
	if err != nil {
		return nil, err
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		nodes:  o.Nodes.Lister(),
		synced: o.Nodes.Informer().HasSynced,
		sets:   sets,
		owned:  map[string][]netip.Prefix{},
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return c, nil
}

// Run occupies the CIDRs existing nodes hold, then allocates with workers
// goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	if !cache.WaitForNamedCacheSync(Name, ctx.Done(), c.synced) {
		return
	}
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "Listing nodes failed")
		return
	}
	c.mu.Lock()
	for _, node := range nodes {
		c.occupy(node)
	}
	c.mu.Unlock()
	c.loop.Run(ctx, workers, c.synced)
}

// occupy counts node's CIDRs as taken; a malformed one gets an Event.
func (c *Controller) occupy(node *corev1.Node) {
	var held []netip.Prefix
	for _, s := range podCIDRs(node) {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			c.recorder.Eventf(node, corev1.EventTypeWarning, "CIDRNotAvailable", "Node has a malformed pod CIDR %q: %v", s, err)
			continue
		}
		for _, set := range c.sets {
			set.Occupy(p)
		}
		held = append(held, p)
	}
	c.owned[node.Name] = held
}

func podCIDRs(node *corev1.Node) []string {
	if len(node.Spec.PodCIDRs) > 0 {
		return node.Spec.PodCIDRs
	}
	if node.Spec.PodCIDR != "" {
		return []string{node.Spec.PodCIDR}
	}
	return nil
}

// sync releases a deleted node's CIDRs and allocates a node without any.
func (c *Controller) sync(ctx context.Context, name string) error {
	node, err := c.nodes.Get(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if apierrors.IsNotFound(err) {
		for _, p := range c.owned[name] {
			for _, set := range c.sets {
				set.Release(p)
			}
		}
		delete(c.owned, name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get node %s: %w", name, err)
	}
	if len(podCIDRs(node)) > 0 {
		if _, ok := c.owned[name]; !ok {
			c.occupy(node)
		}
		return nil
	}
	var got []netip.Prefix
	for _, set := range c.sets {
		p, err := set.Allocate()
		if err != nil {
			for i, q := range got {
				c.sets[i].Release(q)
			}
			c.recorder.Eventf(node, corev1.EventTypeWarning, "CIDRNotAvailable", "Node %s status is now: CIDRNotAvailable", name)
			return fmt.Errorf("allocate pod CIDR for node %s: %w", name, err)
		}
		got = append(got, p)
	}
	cidrs := make([]string, len(got))
	for i, p := range got {
		cidrs[i] = p.String()
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"podCIDR": cidrs[0], "podCIDRs": cidrs}})
	if _, err := c.client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		for i, q := range got {
			c.sets[i].Release(q)
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		c.recorder.Eventf(node, corev1.EventTypeWarning, "CIDRAssignmentFailed", "Node %s status is now: CIDRAssignmentFailed", name)
		return fmt.Errorf("set pod CIDRs %v on node %s: %w", cidrs, name, err)
	}
	c.owned[name] = got
	logr.FromContextOrDiscard(ctx).Info("Allocated pod CIDRs", "node", name, "podCIDRs", cidrs)
	return nil
}
