// Package command is the one entry shape of every Trireme binary: a cobra
// command over a component's options, with --version, --config read under
// the flags given on the command line, and a run function that tests call
// with their own arguments and output streams.
//
// A binary's main is one line, os.Exit(command.Main(app.Run)); its app
// package declares a Spec, or builds a tree of subcommands for Execute,
// and exposes Run(ctx, args, streams) error.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/component-base/version"

	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/memtrim"
)

// Streams are where a command writes: Out for what the user asked to see
// (--version), Err for the final error. A nil stream discards.
type Streams struct {
	Out io.Writer
	Err io.Writer
}

// RunFunc is a binary's whole life: parse args, run until ctx ends, return
// why it stopped.
type RunFunc func(ctx context.Context, args []string, streams Streams) error

// Spec describes a component's command line over options of type O
// (a pointer to the component's Options).
type Spec[O any] struct {
	// Name is the binary's name, as cobra's Use.
	Name string
	// Short is the one-line description `--help` shows.
	Short string
	// NewOptions returns options holding every default, before any flag.
	NewOptions func() O
	// AddFlags binds o's fields to fs. It may be called twice: for the
	// command line, then again over the --config file's options.
	AddFlags func(o O, fs *pflag.FlagSet)
	// ConfigFile returns the --config path o holds once flags are parsed;
	// nil (or "") means the flags are final as parsed, for a component
	// that reads no file or applies it itself.
	ConfigFile func(o O) string
	// LoadConfig returns options whose defaults are the file at path;
	// the command line is parsed again over them, so that flags win over
	// the file. Required when ConfigFile is set.
	LoadConfig func(path string) (O, error)
	// Complete, when set, fills in what the final options leave to be
	// derived (upstream's Complete, before Validate and Run).
	Complete func(o O) error
	// Validate, when set, checks the final options (their logging
	// settings included); what it reports ends the command before Run.
	Validate func(o O) []error
	// Logging, when set, returns the --log-format and -v that o holds:
	// Execute builds that logger (klog routed into it), gives it to Run in
	// ctx (logr.FromContextOrDiscard) and flushes it when Run returns.
	Logging func(o O) logging.Settings
	// TrimWhenIdle, with Logging, returns the executable's start-up pages
	// and freed heap to the kernel while the component idles (memtrim), for
	// the components that run on every node or hold little once started.
	TrimWhenIdle bool
	// Run runs the component with the final options until ctx ends.
	Run func(ctx context.Context, o O) error
}

// LoadConfigWith makes a Spec's LoadConfig from the component's file
// loader and its constructor of options over a loaded configuration.
func LoadConfigWith[C, O any](load func(path string) (C, error), newOptions func(C) O) func(string) (O, error) {
	return func(path string) (O, error) {
		cfg, err := load(path)
		if err != nil {
			var zero O
			return zero, err
		}
		return newOptions(cfg), nil
	}
}

// Execute parses args and runs the component until ctx ends. With
// --version it prints the version to streams.Out and returns.
func (s Spec[O]) Execute(ctx context.Context, args []string, streams Streams) error {
	o := s.NewOptions()
	var showVersion bool
	cmd := &cobra.Command{
		Use:   s.Name,
		Short: s.Short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				fmt.Fprintln(cmd.OutOrStdout(), version.Get().GitVersion)
				return nil
			}
			final, err := s.withConfigFile(o, args)
			if err != nil {
				return err
			}
			return s.run(ctx, final)
		},
	}
	s.bindFlags(cmd.Flags(), o, &showVersion)
	return Execute(ctx, cmd, args, streams)
}

// run completes and validates o, sets up logging and idle trimming as s
// asks, and runs the component.
func (s Spec[O]) run(ctx context.Context, o O) error {
	if s.Complete != nil {
		if err := s.Complete(o); err != nil {
			return err
		}
	}
	if s.Validate != nil {
		if errs := s.Validate(o); len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	if s.Logging == nil {
		return s.Run(ctx, o)
	}
	log, flush, err := s.Logging(o).Logger()
	if err != nil {
		return err
	}
	defer flush()
	log.Info("Starting "+s.Name, "version", version.Get().GitVersion)
	ctx = logr.NewContext(ctx, log)
	if s.TrimWhenIdle {
		go memtrim.RunIdleTrimmer(ctx, log, memtrim.IdleInterval, memtrim.IdleAllocations)
	}
	return s.Run(ctx, o)
}

// Execute runs root, a cobra command tree, with args and streams: the
// entry shape of a binary of subcommands (triremeadm's init, join, reset
// ...), whose app's Run calls it as a component's calls Spec.Execute.
// The error is returned unprinted, for Main to print once.
func Execute(ctx context.Context, root *cobra.Command, args []string, streams Streams) error {
	streams = streams.OrDiscard()
	if args == nil {
		// cobra reads os.Args when given none; no args means none.
		args = []string{}
	}
	root.SetArgs(args)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	root.SilenceUsage = true
	root.SilenceErrors = true
	return root.ExecuteContext(ctx)
}

// Resolve returns the options args describe, the --config file applied
// under the flags, without running anything: what Run would be given.
func (s Spec[O]) Resolve(args []string) (O, error) {
	o := s.NewOptions()
	fs := pflag.NewFlagSet(s.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ignored bool
	s.bindFlags(fs, o, &ignored)
	if err := fs.Parse(args); err != nil {
		var zero O
		return zero, err
	}
	return s.withConfigFile(o, args)
}

func (s Spec[O]) bindFlags(fs *pflag.FlagSet, o O, showVersion *bool) {
	s.AddFlags(o, fs)
	fs.BoolVar(showVersion, "version", false, "Print the version and exit.")
}

// withConfigFile loads --config, when given, and parses args again over
// it, so that flags on the command line win over the file (the kubelet's
// precedence, which every component keeps).
func (s Spec[O]) withConfigFile(o O, args []string) (O, error) {
	if s.ConfigFile == nil || s.ConfigFile(o) == "" {
		return o, nil
	}
	var zero O
	final, err := s.LoadConfig(s.ConfigFile(o))
	if err != nil {
		return zero, err
	}
	fs := pflag.NewFlagSet(s.Name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var ignored bool
	s.bindFlags(fs, final, &ignored)
	if err := fs.Parse(args); err != nil {
		return zero, fmt.Errorf("parse flags over --config: %w", err)
	}
	return final, nil
}

// Main runs run with the process's arguments and streams, under a context
// that ends on SIGINT or SIGTERM, and returns the exit code: 0, or 1 after
// printing the error to stderr. It is the only thing a main calls.
func Main(run RunFunc) int {
	ctx, stop := signalContext()
	defer stop()
	return exitCode(run(ctx, os.Args[1:], Streams{Out: os.Stdout, Err: os.Stderr}), os.Stderr)
}

// exitCode prints err to w and says how the process should exit.
func exitCode(err error, w io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(w, "Error:", err)
	return 1
}

// signalContext ends on the first SIGINT or SIGTERM so that the component
// shuts down in order; a second one exits at once, as upstream's
// components do, for an operator whose shutdown hangs.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		cancel()
		<-ch
		os.Exit(1)
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel()
	}
}

// OrDiscard returns s with io.Discard for its nil streams, for a command
// tree that is built over its streams before Execute runs it.
func (s Streams) OrDiscard() Streams {
	return Streams{Out: orDiscard(s.Out), Err: orDiscard(s.Err)}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
