package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"trireme.dev/apiserver/internal/testserver"
	"trireme.dev/componentbase/testcluster"
)

// Service ranges the shared server runs with (the apiserver's defaults,
// named here because tests check allocations against them).
const (
	serviceCIDR     = "10.96.0.0/12"
	nodePortRange   = "30000-32767"
	kubernetesSvcIP = "10.96.0.1"
)

// sharedArgs are the shared server's flags, at either depth.
var sharedArgs = []string{
	"--service-cluster-ip-range=" + serviceCIDR,
	"--service-node-port-range=" + nodePortRange,
	// StorageObjectInUseProtection adds the pv/pvc-protection finalizers:
	// only a controller removes them, and these tests run none, so deleted
	// volumes would stay Terminating.
	"--disable-admission-plugins=StorageObjectInUseProtection",
}

// The server and clients every test shares.
var (
	shared testcluster.Cluster
	// config reaches the server as the admin user, in JSON.
	config *rest.Config
	client kubernetes.Interface
	dyn    dynamic.Interface
	// metadataClient reads PartialObjectMetadata, as controllers that need
	// only metadata do.
	metadataClient metadata.Interface
	// kubectlCache is kubectl's discovery and OpenAPI cache for this run's
	// servers, so that none meets a stale cache in $HOME from another
	// server that had the same port.
	kubectlCache string
)

// startCluster starts a server with the apiserver flags args at the depth
// testcluster.DepthEnv names: inside this process (go test), or the built
// trireme-apiserver (make e2e). The caller closes it.
var startCluster func(ctx context.Context, args ...string) (testcluster.Cluster, error)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipped with -short: the integration tests start an apiserver and etcd")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	depth, err := testcluster.Depth()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	startCluster = depths[depth]
	fmt.Printf("integration: apiserver %s (%s=%s)\n", depth, testcluster.DepthEnv, depth)
	if kubectlCache, err = os.MkdirTemp("", "trireme-it-kubectl-"); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl cache:", err)
		return 1
	}
	defer os.RemoveAll(kubectlCache)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if shared, err = startCluster(ctx, sharedArgs...); err != nil {
		fmt.Fprintln(os.Stderr, "start apiserver:", err)
		return 1
	}
	defer func() {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "stop apiserver:", err)
		}
	}()
	config = shared.Config()
	client = kubernetes.NewForConfigOrDie(config)
	dyn = dynamic.NewForConfigOrDie(config)
	metadataClient = metadata.NewForConfigOrDie(config)
	code := m.Run()
	if s, ok := shared.(*testcluster.APIServer); ok && code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", s.LogTail(200))
	}
	return code
}

// depths start a cluster at each depth testcluster.Depth names.
var depths = map[string]func(ctx context.Context, args ...string) (testcluster.Cluster, error){
	testcluster.DepthInProcess: func(ctx context.Context, args ...string) (testcluster.Cluster, error) {
		s, err := testserver.Start(ctx, testserver.Options{Verbose: testing.Verbose(), Args: args})
		if err != nil {
			return nil, err
		}
		return s, nil
	},
	testcluster.DepthProcess: func(ctx context.Context, args ...string) (testcluster.Cluster, error) {
		s, err := testcluster.LaunchAPIServer(ctx, testcluster.APIServerOptions{ExtraArgs: args})
		if err != nil {
			return nil, err
		}
		return s, nil
	},
}
