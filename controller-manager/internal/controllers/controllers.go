// Package controllers is the list of controllers the manager runs, in
// start order, and what each needs to start.
package controllers

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/record"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"

	"trireme.dev/controller-manager/internal/clientbuilder"
	"trireme.dev/controller-manager/internal/controllers/resourcequota"
	"trireme.dev/controller-manager/internal/metrics"
)

// Context is what controllers are built from. Everything in it is shared
// by all controllers; each takes its own API client from Clients.
type Context struct {
	Config    *kcmconfig.KubeControllerManagerConfiguration
	Clients   clientbuilder.Builder
	Informers informers.SharedInformerFactory
	Metadata  metadatainformer.SharedInformerFactory
	Resolver  resourcequota.Resolver
	Discovery discovery.DiscoveryInterface
	// RootCA is the PEM bundle the root CA publisher writes.
	RootCA []byte
}

// Runner is a built controller. Run reconciles with workers goroutines and
// returns once ctx ends and its workers have stopped.
type Runner interface {
	Run(ctx context.Context, workers int)
}

// Descriptor describes one controller.
type Descriptor struct {
	// Name is the name --controllers uses, as upstream spells it.
	Name string
	// Aliases are other names --controllers accepts for it (upstream's
	// newer "-controller" spellings).
	Aliases []string
	// ClientName is the ServiceAccount in kube-system it acts as with
	// --use-service-account-credentials, as upstream names them (RBAC's
	// system:controller:<ClientName> roles are bound to these).
	ClientName string
	// Requires are group versions that must be served; while one is not,
	// the controller is skipped.
	Requires []schema.GroupVersion
	// OffByDefault controllers run only when --controllers names them.
	OffByDefault bool
	// Build makes the controller from its own client and event recorder
	// and says how many workers it runs; a nil Runner means the flags turn
	// it off (node IPAM without --allocate-node-cidrs, say). It registers
	// its informers, which Start starts after every Build.
	Build func(ctx context.Context, cc *Context, client kubernetes.Interface, events record.EventRecorder) (Runner, int, error)
}

// Names returns every name and alias --controllers accepts.
func Names(all []Descriptor) []string {
	var names []string
	for _, d := range all {
		names = append(names, d.Name)
		names = append(names, d.Aliases...)
	}
	return names
}

// Enabled reports whether d runs under the --controllers list: the first
// entry naming it ("name" or "-name", by name or alias) decides; otherwise
// "*" turns on the controllers that are on by default.
func Enabled(d Descriptor, list []string) bool {
	star := false
	for _, entry := range list {
		if entry == "*" {
			star = true
			continue
		}
		name, off := entry, false
		if entry[0] == '-' {
			name, off = entry[1:], true
		}
		if name == d.Name || slices.Contains(d.Aliases, name) {
			return !off
		}
	}
	return star && !d.OffByDefault
}

// Served reports whether the apiserver serves gv.
func Served(dc discovery.DiscoveryInterface, gv schema.GroupVersion) (bool, error) {
	groups, err := dc.ServerGroups()
	if err != nil {
		return false, fmt.Errorf("discover groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != gv.Group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == gv.Version {
				return true, nil
			}
		}
	}
	return false, nil
}

// Start builds every enabled controller of all in order, starts the shared
// informers, then runs them all until ctx ends. Controllers whose API is
// not served are skipped with one log line; a controller that fails to
// build stops the start, as a misconfiguration should.
func Start(ctx context.Context, cc *Context, all []Descriptor) error {
	log := logr.FromContextOrDiscard(ctx)
	type started struct {
		name    string
		runner  Runner
		workers int
	}
	var run []started
	// Each controller records its Events with its own client, as
	// upstream's do, so the events rule of its RBAC role is what lets it;
	// controllers sharing an identity share a broadcaster.
	broadcasters := map[string]record.EventBroadcaster{}
	defer func() {
		for _, b := range broadcasters {
			b.Shutdown()
		}
	}()
	for _, d := range all {
		if !Enabled(d, cc.Config.Generic.Controllers) {
			log.Info("Controller disabled", "controller", d.Name)
			continue
		}
		missing, err := firstMissing(cc.Discovery, d.Requires)
		if err != nil {
			return fmt.Errorf("controller %s: %w", d.Name, err)
		}
		if missing != "" {
			log.Info("Skipping controller: its API is not served", "controller", d.Name, "groupVersion", missing)
			continue
		}
		client, err := cc.Clients.Client(d.ClientName)
		if err != nil {
			return fmt.Errorf("controller %s: %w", d.Name, err)
		}
		broadcaster, ok := broadcasters[d.ClientName]
		if !ok {
			broadcaster = record.NewBroadcaster(record.WithContext(ctx))
			broadcaster.StartStructuredLogging(2)
			broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
			broadcasters[d.ClientName] = broadcaster
		}
		events := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: d.ClientName})
		runner, workers, err := d.Build(logr.NewContext(ctx, log.WithValues("controller", d.Name)), cc, client, events)
		if err != nil {
			return fmt.Errorf("build controller %s: %w", d.Name, err)
		}
		if runner == nil {
			log.Info("Controller not started: its configuration turns it off", "controller", d.Name)
			continue
		}
		run = append(run, started{d.Name, runner, workers})
	}
	cc.Informers.Start(ctx.Done())
	cc.Metadata.Start(ctx.Done())
	done := make(chan struct{}, len(run))
	for _, s := range run {
		log.Info("Starting controller", "controller", s.name, "workers", s.workers)
		go func() {
			metrics.SetRunning(s.name, true)
			defer func() {
				metrics.SetRunning(s.name, false)
				done <- struct{}{}
			}()
			s.runner.Run(logr.NewContext(ctx, log), s.workers)
		}()
	}
	<-ctx.Done()
	for range run {
		<-done
	}
	cc.Informers.Shutdown()
	cc.Metadata.Shutdown()
	return nil
}

func firstMissing(dc discovery.DiscoveryInterface, gvs []schema.GroupVersion) (string, error) {
	for _, gv := range gvs {
		ok, err := Served(dc, gv)
		if err != nil {
			return "", err
		}
		if !ok {
			return gv.String(), nil
		}
	}
	return "", nil
}
