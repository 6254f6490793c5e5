package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"trireme.dev/apiserver/internal/server"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"trireme.dev/apiserver/internal/testserver"
)

// The server and clients every test shares.
var (
	shared *testserver.Server
	// config reaches the server as the admin user, in JSON.
	config *rest.Config
	client kubernetes.Interface
	dyn    dynamic.Interface
	// metadataClient reads PartialObjectMetadata, as controllers that need
	// only metadata do.
	metadataClient metadata.Interface
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipped with -short: the integration tests start an apiserver and etcd")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	shared, err = testserver.Start(ctx, testserver.Options{Verbose: testing.Verbose(), Customize: withoutControllerFinalizers})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start apiserver:", err)
		return 1
	}
	defer func() {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop apiserver:", err)
		}
	}()
	config = shared.Config
	client = kubernetes.NewForConfigOrDie(config)
	dyn = dynamic.NewForConfigOrDie(config)
	metadataClient = metadata.NewForConfigOrDie(config)
	return m.Run()
}

// withoutControllerFinalizers turns off the admission plugin that adds the
// pv/pvc-protection finalizers: only a controller removes them, and these
// tests run none, so deleted volumes would stay Terminating.
func withoutControllerFinalizers(o *server.Options) {
	o.Admission.DisablePlugins = append(o.Admission.DisablePlugins, "StorageObjectInUseProtection")
}
