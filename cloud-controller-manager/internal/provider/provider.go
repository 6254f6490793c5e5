// Package provider is Trireme's cloud provider, "trireme", for VMs and
// bare metal: InstancesV2 from the --cloud-config machine inventory (and
// the Nodes' own labels), and LoadBalancer addresses from address pools
// (the file's and AddressPool objects). It has no Routes: flannel owns pod
// routes.
package provider

import (
	"fmt"
	"io"
	"sync"

	cloudprovider "k8s.io/cloud-provider"

	"trireme.dev/cloud-controller-manager/internal/allocator"
	"trireme.dev/cloud-controller-manager/internal/cloudconfig"
)

// Name is the provider's name, as --cloud-provider takes it.
const Name = "trireme"

// clientName is the user agent of the provider's own clients.
const clientName = "trireme-cloud-provider"

var registerOnce sync.Once

// Register adds the provider to k8s.io/cloud-provider's registry, for
// cloudprovider.GetCloudProvider; a provider made from a reader keeps
// that configuration (the binary's own reloads its file: see New).
func Register() {
	registerOnce.Do(func() {
		cloudprovider.RegisterCloudProvider(Name, func(r io.Reader) (cloudprovider.Interface, error) {
			w := cloudconfig.Static(nil)
			if r != nil {
				raw, err := io.ReadAll(r)
				if err != nil {
					return nil, fmt.Errorf("read cloud config: %w", err)
				}
				cfg, err := cloudconfig.Decode(raw)
				if err != nil {
					return nil, err
				}
				w = cloudconfig.Static(cfg)
			}
			return New(w), nil
		})
	})
}

// Cloud implements cloudprovider.Interface.
type Cloud struct {
	config *cloudconfig.Watcher
	alloc  *allocator.Allocator
	lb     *loadBalancer
}

var (
	_ cloudprovider.Interface    = (*Cloud)(nil)
	_ cloudprovider.InformerUser = (*Cloud)(nil)
)

// New returns the provider over a configuration that may change.
func New(config *cloudconfig.Watcher) *Cloud {
	c := &Cloud{config: config, alloc: allocator.New()}
	c.lb = newLoadBalancer(c)
	return c
}

// Initialize makes the provider's clients and starts watching its
// configuration and the AddressPools.
func (c *Cloud) Initialize(cb cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	c.lb.initialize(cb, stop)
}

// LoadBalancer is supported.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return c.lb, true }

// Instances is the old interface; InstancesV2 replaces it.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// InstancesV2 is supported.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return instances{c}, true }

// Zones is left to InstancesV2's metadata.
func (c *Cloud) Zones() (cloudprovider.Zones, bool) { return nil, false }

// Clusters is not supported.
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool) { return nil, false }

// Routes is not supported: flannel routes pod traffic.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return nil, false }

// ProviderName is "trireme".
func (c *Cloud) ProviderName() string { return Name }

// HasClusterID is true: one provider serves one cluster, so its objects
// need no cluster tag.
func (c *Cloud) HasClusterID() bool { return true }
