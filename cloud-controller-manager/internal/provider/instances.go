package provider

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"

	api "trireme.dev/api/config/cloudconfig"
)

// instances answers for machines from the inventory; a Node the inventory
// does not list is described by its own labels unless the inventory is
// exhaustive (removeUnlistedNodes).
type instances struct{ c *Cloud }

var _ cloudprovider.InstancesV2 = instances{}

// machine finds node's entry: by name, or by the provider ID the Node
// already carries.
func (i instances) machine(node *corev1.Node) (*api.Machine, *api.CloudConfiguration) {
	cfg := i.c.config.Current()
	for k := range cfg.Machines {
		m := &cfg.Machines[k]
		if m.Name == node.Name || (node.Spec.ProviderID != "" && m.ProviderID == node.Spec.ProviderID) {
			return m, cfg
		}
	}
	return nil, cfg
}

// InstanceExists is false only for a Node an exhaustive inventory does
// not list; the node lifecycle controller then deletes it once NotReady.
func (i instances) InstanceExists(_ context.Context, node *corev1.Node) (bool, error) {
	m, cfg := i.machine(node)
	return m != nil || !cfg.RemoveUnlistedNodes, nil
}

// InstanceShutdown is true for a machine the inventory marks shut down.
func (i instances) InstanceShutdown(_ context.Context, node *corev1.Node) (bool, error) {
	m, _ := i.machine(node)
	return m != nil && m.Shutdown, nil
}

// InstanceMetadata describes node's machine. Whatever the inventory
// leaves out comes from the Node: zone, region and instance type from its
// labels (as `triremeadm join --zone/--region` sets them), addresses from
// the node IP its kubelet was given.
func (i instances) InstanceMetadata(_ context.Context, node *corev1.Node) (*cloudprovider.InstanceMetadata, error) {
	m, cfg := i.machine(node)
	if m == nil && cfg.RemoveUnlistedNodes {
		return nil, cloudprovider.InstanceNotFound
	}
	md := &cloudprovider.InstanceMetadata{
		ProviderID:   node.Spec.ProviderID,
		Zone:         node.Labels[corev1.LabelTopologyZone],
		Region:       node.Labels[corev1.LabelTopologyRegion],
		InstanceType: node.Labels[corev1.LabelInstanceTypeStable],
	}
	if m != nil {
		if md.ProviderID == "" {
			md.ProviderID = m.ProviderID
		}
		md.Zone = cmp.Or(m.Zone, md.Zone)
		md.Region = cmp.Or(m.Region, md.Region)
		md.InstanceType = cmp.Or(m.InstanceType, md.InstanceType)
		md.NodeAddresses = append(md.NodeAddresses, m.Addresses...)
	}
	if md.ProviderID == "" {
		md.ProviderID = api.DefaultProviderIDScheme + node.Name
	}
	if len(md.NodeAddresses) == 0 {
		addrs, err := kubeletAddresses(node)
		if err != nil {
			return nil, err
		}
		md.NodeAddresses = addrs
	}
	if !hasType(md.NodeAddresses, corev1.NodeHostName) {
		md.NodeAddresses = append(md.NodeAddresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: node.Name})
	}
	return md, nil
}

// kubeletAddresses are the InternalIPs a Node's kubelet knows: the
// provided-node-ip annotation it registers with, else the InternalIPs
// the Node's status already has.
func kubeletAddresses(node *corev1.Node) ([]corev1.NodeAddress, error) {
	var out []corev1.NodeAddress
	if v := node.Annotations[cloudproviderapi.AnnotationAlphaProvidedIPAddr]; v != "" {
		for _, s := range strings.Split(v, ",") {
			ip, err := netip.ParseAddr(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("node %s: annotation %s: %w", node.Name, cloudproviderapi.AnnotationAlphaProvidedIPAddr, err)
			}
			out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip.String()})
		}
		return out, nil
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			out = append(out, a)
		}
	}
	return out, nil
}

func hasType(addrs []corev1.NodeAddress, t corev1.NodeAddressType) bool {
	for _, a := range addrs {
		if a.Type == t {
			return true
		}
	}
	return false
}
