// Package proxy serves the proxy subresources of pods, services and nodes
// (kubectl proxy, kubectl get --raw .../proxy/...): it resolves the named
// object to a backend address and forwards the request there through the
// upgrade-aware reverse proxy.
package proxy
