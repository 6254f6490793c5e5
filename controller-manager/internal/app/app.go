// Package app is trireme-controller-manager's command line: flags and the
// --config file into options, then the manager, run until a signal.
package app

import (
	"context"

	"github.com/spf13/pflag"

	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/logging"
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
	Validate: func(o *options.Options) []error {
		return o.Validate(controllers.Names(controllers.All))
	},
	Logging: func(o *options.Options) logging.Settings { return o.Settings },
	// Start-up runs the init code of every API group once; give those
	// pages of the executable, and freed heap, back while idle.
	TrimWhenIdle: true,
	Run:          run,
}

// Run parses args and runs the controller-manager until ctx ends. Tests
// call it directly.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	return spec.Execute(ctx, args, streams)
}

func run(ctx context.Context, o *options.Options) error {
	m, err := manager.New(o, controllers.All)
	if err != nil {
		return err
	}
	return m.Run(ctx)
}
