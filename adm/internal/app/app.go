// Package app is triremeadm's command line: init (and its phases), join, reset, upgrade,
// token, certs, images and the hidden supervise command.
package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"trireme.dev/adm/internal/version"
	"trireme.dev/componentbase/command"
)

// Run parses args and runs triremeadm's command until it finishes or ctx
// ends. Tests call it directly; main runs it under command.Main.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	streams = streams.OrDiscard()
	return command.Execute(ctx, newCommand(streams.Out), args, streams)
}

// global holds the flags every command shares.
type global struct {
	// root places every file below a directory; tests use it so nothing touches /etc.
	root string
}

// newCommand builds the command tree, whose commands write to out.
func newCommand(out io.Writer) *cobra.Command {
	g := &global{}
	cmd := &cobra.Command{
		Use:     "triremeadm",
		Short:   "Install a Trireme cluster: init a control-plane node, join workers, reset",
		Version: version.Version,
	}
	cmd.PersistentFlags().StringVar(&g.root, "root-dir", "", "Place every file triremeadm writes below this directory (for tests).")
	_ = cmd.PersistentFlags().MarkHidden("root-dir")
	cmd.AddCommand(
		newInitCommand(g, out),
		newJoinCommand(g, out),
		newResetCommand(g, out),
		newTokenCommand(g, out),
		newCertsCommand(g, out),
		newImagesCommand(g, out),
		newEtcdCommand(g, out),
		newUpgradeCommand(g, out),
		newSuperviseCommand(),
		&cobra.Command{Use: "version", Short: "Print triremeadm's version", Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintln(c.OutOrStdout(), version.Version)
		}},
	)
	return cmd
}
