package testcluster

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
)

// Cluster is a running control plane as a test body sees it, whatever the
// depth it runs at: inside the test binary (the apiserver's testserver) or
// as the built binaries (APIServer). A body written against it runs at
// both depths unchanged.
type Cluster interface {
	// Config reaches the apiserver as the admin user (admin.kubeconfig:
	// group kubeadm:cluster-admins, bound to cluster-admin).
	// Each call returns a copy the caller may modify.
	Config() *rest.Config
	// KubeconfigPath is the admin kubeconfig on disk, for kubectl.
	KubeconfigPath() string
	// Restart stops the apiserver and starts it again on the same data and
	// address, returning once it is ready: configurations and clients made
	// before keep working.
	Restart(ctx context.Context) error
	// Close stops everything the cluster runs and removes what its start
	// created. It is safe to call more than once.
	Close() error
}

// DepthEnv names the environment variable that picks the depth a suite
// written against Cluster runs at: DepthProcess runs the built binaries
// (found as Binary finds them); empty or DepthInProcess runs the
// components inside the test binary.
const DepthEnv = "TRIREME_TEST_DEPTH"

// The depths DepthEnv may name.
const (
	DepthInProcess = "in-process"
	DepthProcess   = "process"
)

// Depth returns the depth DepthEnv asks for, DepthInProcess when it is
// unset, and an error naming the choices for any other value: a typo must
// not quietly run the other depth.
func Depth() (string, error) {
	switch d := os.Getenv(DepthEnv); d {
	case "", DepthInProcess:
		return DepthInProcess, nil
	case DepthProcess:
		return DepthProcess, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", DepthEnv, d, DepthInProcess, DepthProcess)
	}
}
