// Package app is triremeadm's command line: init (and its phases), join, reset,
// token, certs, images and the hidden supervise command.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"trireme.dev/adm/internal/version"
)

// Main runs triremeadm with args and returns the exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := NewCommand(os.Stdout, os.Stderr).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}

// global holds the flags every command shares.
type global struct {
	// root places every file below a directory; tests use it so nothing touches /etc.
	root string
}

// NewCommand builds the command tree writing to out and errOut.
func NewCommand(out, errOut io.Writer) *cobra.Command {
	g := &global{}
	cmd := &cobra.Command{
		Use:           "triremeadm",
		Short:         "Install a Trireme cluster: init a control-plane node, join workers, reset",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Version,
	}
	cmd.SetOut(out)
	cmd.SetErr(errOut)
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
		newSuperviseCommand(),
		&cobra.Command{Use: "version", Short: "Print triremeadm's version", Run: func(c *cobra.Command, _ []string) {
			fmt.Fprintln(c.OutOrStdout(), version.Version)
		}},
	)
	return cmd
}
