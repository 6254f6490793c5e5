// Package app is trireme-netpol's command line: flags into options, then
// the agent (or --cleanup), run until a signal.
package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
	"k8s.io/component-base/version"

	cnpclient "sigs.k8s.io/network-policy-api/pkg/client/clientset/versioned"
	cnpinformers "sigs.k8s.io/network-policy-api/pkg/client/informers/externalversions"

	"trireme.dev/componentbase/clientconn"
	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/serving"
	"trireme.dev/netpol/internal/agent"
	"trireme.dev/netpol/internal/conntrack"
	"trireme.dev/netpol/internal/options"
	"trireme.dev/netpol/internal/ruleset"
)

var spec = command.Spec[*options.Options]{
	Name:       "trireme-netpol",
	Short:      "Enforce NetworkPolicies on this node, compiled into one nftables table",
	NewOptions: options.New,
	AddFlags:   (*options.Options).AddFlags,
	Validate:   (*options.Options).Validate,
	Logging:    func(o *options.Options) logging.Settings { return o.Settings },
	// A DaemonSet on every node: idle, it holds only what it uses.
	TrimWhenIdle: true,
	Run:          run,
}

// Run parses args and runs the agent until ctx ends. Tests call it
// directly.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

func run(ctx context.Context, o *options.Options) error {
	log := logr.FromContextOrDiscard(ctx)
	table, err := ruleset.NewWriter()
	if err != nil {
		return err
	}
	if o.Cleanup {
		if err := table.Cleanup(ctx); err != nil {
			return err
		}
		log.Info("Removed the table", "table", ruleset.Table)
		return nil
	}
	nodeName, err := o.NodeName()
	if err != nil {
		return err
	}
	restCfg, err := clientconn.Config("", o.Kubeconfig, componentbaseconfig.ClientConnectionConfiguration{QPS: 20, Burst: 40})
	if err != nil {
		return err
	}
	restCfg.UserAgent = "trireme-netpol/" + version.Get().GitVersion
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("event broadcaster: %w", err)
	}
	defer broadcaster.Shutdown()

	metrics := agent.NewMetrics(table.Counters, log.WithName("metrics"))
	factory := informers.NewSharedInformerFactory(client, 0)
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nodeName).String()
	}))
	a := agent.New(agent.Config{
		NodeName: nodeName, Client: client, Table: table,
		MinSyncPeriod: o.MinSyncPeriod, SyncPeriod: o.SyncPeriod,
		Recorder: broadcaster.NewRecorder(scheme.Scheme, "trireme-netpol"),
		Metrics:  metrics, Cut: conntrack.Cut, LogGroup: o.LogDeniedGroup, Log: log.WithName("agent"),
	}, factory, nodeFactory)
	handler := serving.Handler(serving.Endpoints{
		Metrics: metrics.Registry,
		Live:    []healthz.HealthChecker{healthz.NamedCheck("sync", func(*http.Request) error { return a.Healthy() })},
	})
	addr, err := o.Start(ctx, handler)
	if err != nil {
		return err
	}
	log.Info("Policing this node's pods", "node", nodeName, "serving", addr,
		"minSyncPeriod", o.MinSyncPeriod, "syncPeriod", o.SyncPeriod)
	for _, f := range []informers.SharedInformerFactory{factory, nodeFactory} {
		f.Start(ctx.Done())
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("informer of %v did not sync: %w", typ, context.Cause(ctx))
			}
		}
	}
	cnpClient, err := cnpclient.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("ClusterNetworkPolicy client: %w", err)
	}
	if o.LogDeniedGroup != 0 {
		go func() {
			if err := a.LogDenied(ctx); err != nil {
				log.Error(err, "Cannot log denied packets")
			}
		}()
	}
	go a.WatchClusterPolicies(ctx, client.Discovery(), cnpinformers.NewSharedInformerFactory(cnpClient, 0), 30*time.Second)
	a.Run(ctx)
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Disarm(dctx); err != nil {
		return fmt.Errorf("leave the table to pods created while stopped: %w", err)
	}
	log.Info("Stopped; the policies stay in force, and new pods are not held back until the agent is back")
	return nil
}
