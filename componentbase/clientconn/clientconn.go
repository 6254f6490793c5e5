// Package clientconn builds a component's client configuration from the
// clientConnection settings upstream's component configurations carry
// (KubeControllerManagerConfiguration, KubeSchedulerConfiguration,
// KubeProxyConfiguration), so that each component reads them the same way.
package clientconn

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
)

// Config loads the kubeconfig file (master, when set, overrides its server;
// with neither, the in-cluster configuration), then applies cc: QPS, burst,
// content type and accepted content types. A content type other than JSON
// accepts JSON too unless acceptContentTypes says otherwise, so that
// resources served only as JSON (custom resources) still decode.
func Config(master, kubeconfig string, cc componentbaseconfig.ClientConnectionConfiguration) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	if master == "" && kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags(master, kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("client configuration: %w", err)
	}
	cfg.QPS = cc.QPS
	cfg.Burst = int(cc.Burst)
	cfg.ContentType = cc.ContentType
	cfg.AcceptContentTypes = cc.AcceptContentTypes
	if cfg.AcceptContentTypes == "" && cc.ContentType != "" && cc.ContentType != "application/json" {
		cfg.AcceptContentTypes = cc.ContentType + ",application/json"
	}
	return cfg, nil
}
