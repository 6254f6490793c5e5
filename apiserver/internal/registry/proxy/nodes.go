package proxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Resolver looks host names up; net.DefaultResolver is one.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// NodeStoreConfig is what nodes/proxy needs to reach kubelets.
type NodeStoreConfig struct {
	// Kubelet orders the node address types tried.
	Kubelet KubeletConfig
	// KubeletTransport carries requests to the kubelet port (from Kubelet.Transport).
	KubeletTransport http.RoundTripper
	// OtherTransport carries requests to any other port the id names.
	OtherTransport http.RoundTripper
	// Resolver checks where a node's host name points; nil means net.DefaultResolver.
	Resolver Resolver
}

// NewNodeStore returns the nodes/proxy subresource: requests go over https
// to the kubelet at the node's preferred address and the port in
// status.daemonEndpoints (10250 when unset), or, when the id names another
// port, to that port with the id's scheme.
func NewNodeStore(nodes rest.Getter, cfg NodeStoreConfig) *Store {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	return &Store{
		newOptions: func() runtime.Object { return &corev1.NodeProxyOptions{} },
		locate: func(ctx context.Context, id string) (target, error) {
			return locateNode(ctx, nodes, cfg, id)
		},
	}
}

func locateNode(ctx context.Context, nodes rest.Getter, cfg NodeStoreConfig, id string) (target, error) {
	oid, err := parseID("node", id)
	if err != nil {
		return target{}, err
	}
	obj, err := nodes.Get(ctx, oid.Name, &metav1.GetOptions{})
	if err != nil {
		return target{}, err
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return target{}, apierrors.NewInternalError(fmt.Errorf("node storage returned %T", obj))
	}
	host, err := nodeAddress(node, cfg.Kubelet.PreferredAddressTypes)
	if err != nil {
		return target{}, err
	}
	if err := checkHost(ctx, cfg.Resolver, host); err != nil {
		return target{}, err
	}
	kubeletPort := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if kubeletPort <= 0 {
		kubeletPort = DefaultKubeletPort
	}
	if oid.Port == "" || oid.Port == strconv.Itoa(int(kubeletPort)) {
		u := &url.URL{Scheme: "https", Host: hostPort(host, kubeletPort)}
		return target{URL: u, Transport: cfg.KubeletTransport}, nil
	}
	port, numeric, err := portNumber(oid.Port)
	if err != nil {
		return target{}, err
	}
	if !numeric {
		return target{}, apierrors.NewBadRequest(fmt.Sprintf("invalid port %q: a node proxy port must be a number", oid.Port))
	}
	u := &url.URL{Scheme: oid.Scheme, Host: hostPort(host, port)}
	return target{URL: u, Transport: cfg.OtherTransport}, nil
}

// nodeAddress returns the node's first address of the most preferred type
// it has.
func nodeAddress(node *corev1.Node, preferred []string) (string, error) {
	for _, t := range preferred {
		for _, a := range node.Status.Addresses {
			if string(a.Type) == t && a.Address != "" {
				return a.Address, nil
			}
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("node %q has no address of the types %v", node.Name, preferred))
}

// checkHost refuses a node address that is, or resolves to, an address the
// apiserver must not connect to.
func checkHost(ctx context.Context, r Resolver, host string) error {
	if ip := net.ParseIP(host); ip != nil {
		return proxyable(ip)
	}
	addrs, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("resolve node address %q: %v", host, err))
	}
	if len(addrs) == 0 {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("node address %q resolves to no addresses", host))
	}
	for _, a := range addrs {
		if err := proxyable(a.IP); err != nil {
			return err
		}
	}
	return nil
}
