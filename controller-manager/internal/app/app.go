// Package app is trireme-controller-manager's command line: flags and the
// --config file into options, then the manager, run until a signal.
package app

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/component-base/version"

	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/memtrim"
	"trireme.dev/controller-manager/internal/controllers"
	"trireme.dev/controller-manager/internal/manager"
	"trireme.dev/controller-manager/internal/options"
)

// spec is the command line: upstream's flags over the --config
// KubeControllerManagerConfiguration.
var spec = command.Spec[*options.Options]{
	Name:       "trireme-controller-manager",
	Short:      "Run the controllers that keep the cluster's built-in objects in their desired state",
	NewOptions: func() *options.Options { return options.New(nil) },
	AddFlags: func(o *options.Options, fs *pflag.FlagSet) {
		o.AddFlags(fs, controllers.Names(controllers.All))
	},
	ConfigFile: func(o *options.Options) string { return o.ConfigFile },
	LoadConfig: command.LoadConfigWith(options.LoadConfig, options.New),
	Run:        run,
}

// Run parses args and runs the controller-manager until ctx ends. Tests
// call it directly.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

func run(ctx context.Context, o *options.Options) error {
	if errs := o.Validate(controllers.Names(controllers.All)); len(errs) > 0 {
		return errors.Join(errs...)
	}
	log, flush, err := logging.New(o.LogFormat, o.Verbosity)
	if err != nil {
		return err
	}
	defer flush()
	log.Info("Starting trireme-controller-manager", "version", version.Get().GitVersion)
	// Start-up runs the init code of every API group once; give those
	// pages of the executable, and freed heap, back while idle.
	go memtrim.RunIdleTrimmer(ctx, log, memtrim.IdleInterval, memtrim.IdleAllocations)
	m, err := manager.New(o, controllers.All)
	if err != nil {
		return err
	}
	return m.Run(logr.NewContext(ctx, log))
}
