package proxy

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/transport"
)

// DefaultKubeletPort is where kubelets serve when a node does not say.
const DefaultKubeletPort = 10250

// KubeletConfig is how the apiserver reaches kubelets: upstream's
// --kubelet-client-certificate, --kubelet-client-key,
// --kubelet-certificate-authority and --kubelet-preferred-address-types.
type KubeletConfig struct {
	// CertFile and KeyFile are the client certificate presented to kubelets.
	CertFile, KeyFile string
	// CAFile verifies kubelets' serving certificates; without it they are
	// not verified, as upstream does.
	CAFile string
	// PreferredAddressTypes orders the node address types tried when
	// connecting to a kubelet.
	PreferredAddressTypes []string
}

// NewKubeletConfig returns the defaults: no client certificate, no CA,
// and the node's internal addresses before its external ones and its
// hostname last, since a hostname often resolves only on the node itself.
func NewKubeletConfig() KubeletConfig {
	return KubeletConfig{PreferredAddressTypes: []string{
		string(corev1.NodeInternalIP), string(corev1.NodeInternalDNS),
		string(corev1.NodeExternalIP), string(corev1.NodeExternalDNS),
		string(corev1.NodeHostName),
	}}
}

// knownAddressTypes are the node address types a preference may name.
var knownAddressTypes = []string{
	string(corev1.NodeHostName), string(corev1.NodeInternalIP), string(corev1.NodeInternalDNS),
	string(corev1.NodeExternalIP), string(corev1.NodeExternalDNS),
}

// Validate reports every invalid setting.
func (c KubeletConfig) Validate() []error {
	var errs []error
	if (c.CertFile == "") != (c.KeyFile == "") {
		errs = append(errs, fmt.Errorf("--kubelet-client-certificate and --kubelet-client-key must be given together"))
	}
	if len(c.PreferredAddressTypes) == 0 {
		errs = append(errs, fmt.Errorf("--kubelet-preferred-address-types must name at least one address type"))
	}
	for _, t := range c.PreferredAddressTypes {
		if !slices.Contains(knownAddressTypes, t) {
			errs = append(errs, fmt.Errorf("--kubelet-preferred-address-types: unknown address type %q (known: %v)", t, knownAddressTypes))
		}
	}
	return errs
}

// Transport returns the TLS transport to kubelets; it fails when the
// certificate files cannot be read.
func (c KubeletConfig) Transport() (http.RoundTripper, error) {
	tc := &transport.Config{TLS: transport.TLSConfig{CAFile: c.CAFile, CertFile: c.CertFile, KeyFile: c.KeyFile}}
	if !tc.HasCA() {
		tc.TLS.Insecure = true
	}
	tlsConfig, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, fmt.Errorf("kubelet client TLS: %w", err)
	}
	return newHTTPTransport(tlsConfig), nil
}

// NewBackendTransport returns the transport to pods and service endpoints.
// It does not verify https backends' certificates: they are reached by IP,
// which their certificates do not name, as upstream reasons.
func NewBackendTransport() http.RoundTripper {
	return newHTTPTransport(&tls.Config{InsecureSkipVerify: true})
}

func newHTTPTransport(tlsConfig *tls.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return utilnet.SetTransportDefaults(&http.Transport{
		DialContext:     dialer.DialContext,
		TLSClientConfig: tlsConfig,
	})
}
