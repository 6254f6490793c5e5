// Package app is trireme-dashboard's command line: flags into options,
// then the console served until a signal.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/processmetrics"
	"trireme.dev/componentbase/serving"
	"trireme.dev/dashboard/internal/options"
	"trireme.dev/dashboard/internal/server"
	"trireme.dev/dashboard/internal/session"
	"trireme.dev/dashboard/internal/ui"
)

// sessionTTL bounds a sign-in; a token that expires sooner is refused by
// the apiserver first.
const sessionTTL = 12 * time.Hour

var spec = command.Spec[*options.Options]{
	Name:       "trireme-dashboard",
	Short:      "Serve the cluster's web console, acting only as the signed-in user",
	NewOptions: options.New,
	AddFlags:   (*options.Options).AddFlags,
	Validate:   (*options.Options).Validate,
	Logging:    func(o *options.Options) logging.Settings { return o.Settings },
	// One per cluster, idle most of the time it runs.
	TrimWhenIdle: true,
	Run:          run,
}

// Run parses args and serves until ctx ends. Tests call it directly.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

func run(ctx context.Context, o *options.Options) error {
	log := logr.FromContextOrDiscard(ctx)
	api, err := apiConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	key, err := sessionKey(o.SessionKeyFile)
	if err != nil {
		return err
	}
	sealer, err := session.New(key, sessionTTL)
	if err != nil {
		return err
	}
	reg := processmetrics.NewRegistry()
	srv := &server.Server{API: api, Sealer: sealer, Assets: ui.Assets(), Log: log}
	mux := http.NewServeMux()
	health := serving.Handler(serving.Endpoints{Metrics: reg})
	for _, p := range []string{"/healthz", "/healthz/", "/livez", "/livez/", "/readyz", "/readyz/", "/metrics"} {
		mux.Handle(p, health)
	}
	mux.Handle("/", srv.Handler())
	addr, err := o.Start(ctx, mux)
	if err != nil {
		return err
	}
	log.Info("Serving the console", "address", addr)
	<-ctx.Done()
	return nil
}

// inClusterCA is where a pod finds the cluster's CA; the chart mounts only
// that file there, from the namespace's kube-root-ca.crt, and no token.
const inClusterCA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

// apiConfig is where the apiserver is and which CA it has, stripped of
// every credential: each call carries the signed-in user's token.
func apiConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, err
		}
		return rest.AnonymousClientConfig(c), nil
	}
	// Not rest.InClusterConfig: it insists on the ServiceAccount token,
	// which the console must not hold.
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("no --kubeconfig and not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset")
	}
	if _, err := os.Stat(inClusterCA); err != nil {
		return nil, fmt.Errorf("the cluster's CA: %w", err)
	}
	return &rest.Config{Host: "https://" + net.JoinHostPort(host, port), TLSClientConfig: rest.TLSClientConfig{CAFile: inClusterCA}}, nil
}

func sessionKey(path string) ([]byte, error) {
	if path == "" {
		return session.NewKey()
	}
	return session.ReadKey(path)
}
