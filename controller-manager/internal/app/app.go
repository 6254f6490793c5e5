// Package app is trireme-controller-manager's command line: flags and the
// --config file into options, then the manager, run until a signal.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/version"

	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/memtrim"
	"trireme.dev/controller-manager/internal/controllers"
	"trireme.dev/controller-manager/internal/manager"
	"trireme.dev/controller-manager/internal/options"
)

// Main runs the command with args and returns the exit code.
func Main(args []string) int {
	if err := Run(genericapiserver.SetupSignalContext(), args, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		return 1
	}
	return 0
}

// Run parses args and runs the controller-manager until ctx ends. Tests
// call it directly.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	o := options.New(nil)
	var showVersion bool
	cmd := &cobra.Command{
		Use:           "trireme-controller-manager",
		Short:         "Run the controllers that keep the cluster's built-in objects in their desired state",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				fmt.Fprintln(cmd.OutOrStdout(), version.Get().GitVersion)
				return nil
			}
			final, err := withConfigFile(o, args)
			if err != nil {
				return err
			}
			return run(ctx, final)
		},
	}
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	bindFlags(cmd.Flags(), o, &showVersion)
	return cmd.Execute()
}

func bindFlags(fs *pflag.FlagSet, o *options.Options, showVersion *bool) {
	o.AddFlags(fs, controllers.Names(controllers.All))
	fs.BoolVar(showVersion, "version", false, "Print the version and exit.")
}

// withConfigFile loads --config, when given, and parses args again over
// it, so that flags on the command line win over the file (the kubelet's
// precedence).
func withConfigFile(o *options.Options, args []string) (*options.Options, error) {
	if o.ConfigFile == "" {
		return o, nil
	}
	cfg, err := options.LoadConfig(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	final := options.New(cfg)
	fs := pflag.NewFlagSet("trireme-controller-manager", pflag.ContinueOnError)
	var ignored bool
	bindFlags(fs, final, &ignored)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("parse flags over --config: %w", err)
	}
	return final, nil
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
