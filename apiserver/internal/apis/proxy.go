package apis

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"

	"trireme.dev/apiserver/internal/registry/proxy"
)

// addProxySubresources adds pods/proxy, services/proxy and nodes/proxy, and
// the kubelet streams pods/log, pods/exec, pods/attach and pods/portforward; it
// fails when the kubelet client certificates cannot be loaded.
func addProxySubresources(byGV map[schema.GroupVersion]map[string]rest.Storage, stores Stores, kubelet proxy.KubeletConfig) error {
	kubeletTransport, err := kubelet.Transport()
	if err != nil {
		return err
	}
	backends := proxy.NewBackendTransport()
	core := byGV[corev1.SchemeGroupVersion]
	pods := stores[corev1.Resource("pods")]
	core["pods/proxy"] = proxy.NewPodStore(pods, backends)
	core["services/proxy"] = proxy.NewServiceStore(stores[corev1.Resource("services")], pods, stores[discoveryv1.Resource("endpointslices")], backends)
	core["nodes/proxy"] = proxy.NewNodeStore(stores[corev1.Resource("nodes")], proxy.NodeStoreConfig{
		Kubelet:          kubelet,
		KubeletTransport: kubeletTransport,
		OtherTransport:   backends,
	})
	nodes := stores[corev1.Resource("nodes")]
	core["pods/log"] = proxy.NewLogStore(pods, nodes, kubelet, kubeletTransport)
	core["pods/exec"] = proxy.NewExecStore(pods, nodes, kubelet, kubeletTransport)
	core["pods/attach"] = proxy.NewAttachStore(pods, nodes, kubelet, kubeletTransport)
	core["pods/portforward"] = proxy.NewPortForwardStore(pods, nodes, kubelet, kubeletTransport)
	return nil
}
