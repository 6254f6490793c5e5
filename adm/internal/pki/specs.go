package pki

import (
	"crypto/x509"
	"fmt"
	"math/big"
	"net"
	"slices"
)

// Inputs is what the cluster's certificates depend on.
type Inputs struct {
	// NodeName is this node's name; it is a SAN of the apiserver and etcd certificates.
	NodeName string
	// AdvertiseAddress is the apiserver's (and etcd's) address.
	AdvertiseAddress net.IP
	// ServiceSubnet is the Service range; its first IP is the kubernetes Service's.
	ServiceSubnet string
	// DNSDomain is the cluster's DNS domain.
	DNSDomain string
	// ControlPlaneEndpointHost is the host part of --control-plane-endpoint, if any.
	ControlPlaneEndpointHost string
	// APIServerSANs, EtcdServerSANs and EtcdPeerSANs are extra names or IPs.
	APIServerSANs, EtcdServerSANs, EtcdPeerSANs []string
	// ExternalEtcd leaves out the etcd CA and the certificates it signs.
	ExternalEtcd bool
}

// Names of the CAs.
const (
	CA           = "ca"
	FrontProxyCA = "front-proxy-ca"
	EtcdCA       = "etcd/ca"
)

// ClusterAdminsGroup is the group admin.conf and the apiserver's kubelet client
// certificate carry; kubeadm binds it to cluster-admin.
const ClusterAdminsGroup = "kubeadm:cluster-admins"

// Specs lists the cluster's certificates, CAs first, as kubeadm names them.
func Specs(in Inputs) ([]Spec, error) {
	svcIP, err := FirstIP(in.ServiceSubnet)
	if err != nil {
		return nil, err
	}
	apiDNS := []string{in.NodeName, "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + in.DNSDomain}
	apiIPs := []net.IP{svcIP, in.AdvertiseAddress}
	addSAN := func(dns *[]string, ips *[]net.IP, s string) {
		if s == "" {
			return
		}
		if ip := net.ParseIP(s); ip != nil {
			if !slices.ContainsFunc(*ips, ip.Equal) {
				*ips = append(*ips, ip)
			}
		} else if !slices.Contains(*dns, s) {
			*dns = append(*dns, s)
		}
	}
	addSAN(&apiDNS, &apiIPs, in.ControlPlaneEndpointHost)
	for _, s := range in.APIServerSANs {
		addSAN(&apiDNS, &apiIPs, s)
	}
	server, client := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	specs := []Spec{
		{Name: CA, CommonName: "kubernetes"},
		{Name: "apiserver", CA: CA, CommonName: "kube-apiserver", Usages: server, DNSNames: apiDNS, IPs: apiIPs},
		{Name: "apiserver-kubelet-client", CA: CA, CommonName: "kube-apiserver-kubelet-client", Organization: []string{ClusterAdminsGroup}, Usages: client},
		{Name: FrontProxyCA, CommonName: "front-proxy-ca"},
		{Name: "front-proxy-client", CA: FrontProxyCA, CommonName: "front-proxy-client", Usages: client},
	}
	if in.ExternalEtcd {
		return specs, nil
	}
	etcdDNS := []string{in.NodeName, "localhost"}
	etcdIPs := []net.IP{in.AdvertiseAddress, net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}
	serverDNS, serverIPs := slices.Clone(etcdDNS), slices.Clone(etcdIPs)
	for _, s := range in.EtcdServerSANs {
		addSAN(&serverDNS, &serverIPs, s)
	}
	peerDNS, peerIPs := slices.Clone(etcdDNS), slices.Clone(etcdIPs)
	for _, s := range in.EtcdPeerSANs {
		addSAN(&peerDNS, &peerIPs, s)
	}
	return append(specs,
		Spec{Name: EtcdCA, CommonName: "etcd-ca"},
		Spec{Name: "etcd/server", CA: EtcdCA, CommonName: in.NodeName, Usages: both, DNSNames: serverDNS, IPs: serverIPs},
		Spec{Name: "etcd/peer", CA: EtcdCA, CommonName: in.NodeName, Usages: both, DNSNames: peerDNS, IPs: peerIPs},
		Spec{Name: "etcd/healthcheck-client", CA: EtcdCA, CommonName: "kube-etcd-healthcheck-client", Usages: client},
		Spec{Name: "apiserver-etcd-client", CA: EtcdCA, CommonName: "kube-apiserver-etcd-client", Usages: client},
	), nil
}

// FirstIP returns the first usable address of cidr (the network address plus one):
// the kubernetes Service's ClusterIP.
func FirstIP(cidr string) (net.IP, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("service subnet %q: %w", cidr, err)
	}
	return NthIP(n, 1), nil
}

// NthIP returns the n-th address of network n (0 is the network address).
func NthIP(n *net.IPNet, i int64) net.IP {
	base := n.IP
	if v4 := base.To4(); v4 != nil {
		base = v4
	}
	v := new(big.Int).SetBytes(base)
	v.Add(v, big.NewInt(i))
	b := v.Bytes()
	out := make(net.IP, len(base))
	copy(out[len(out)-len(b):], b)
	return out
}
