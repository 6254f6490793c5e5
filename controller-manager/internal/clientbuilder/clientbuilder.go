// Package clientbuilder gives each controller its own API client: with
// the controller-manager's own credentials, or, with
// --use-service-account-credentials, as the controller's ServiceAccount in
// kube-system so RBAC can hold each controller to its own role.
package clientbuilder

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Builder hands out clients for named callers. Name is the identity the
// client acts as (a ServiceAccount name in kube-system, or just a user
// agent suffix); implementations must be safe for concurrent use, and may
// block until that identity can be used.
type Builder interface {
	// Config returns a rest.Config acting as name.
	Config(name string) (*rest.Config, error)
	// Client returns a typed clientset acting as name.
	Client(name string) (kubernetes.Interface, error)
}

// UserAgent is the component part of every client's user agent.
const UserAgent = "trireme-controller-manager"

// Simple shares the manager's credentials with every controller and tells
// them apart only by user agent.
type Simple struct {
	// Root is the manager's own client config.
	Root *rest.Config
}

// Config implements Builder.
func (b Simple) Config(name string) (*rest.Config, error) {
	return rest.AddUserAgent(rest.CopyConfig(b.Root), UserAgent+"/"+name), nil
}

// Client implements Builder.
func (b Simple) Client(name string) (kubernetes.Interface, error) {
	cfg, err := b.Config(name)
	if err != nil {
		return nil, err
	}
	return newClient(name, cfg)
}

func newClient(name string, cfg *rest.Config) (kubernetes.Interface, error) {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", name, err)
	}
	return c, nil
}
