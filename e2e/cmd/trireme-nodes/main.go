// Command trireme-nodes adds worker nodes of network namespaces to the
// cluster `make up` installed on this machine (`make up WORKERS=N`) and
// removes them (`make down`); see package workernodes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"trireme.dev/e2e/internal/workernodes"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := workernodes.Run(ctx, os.Args[1:], os.Stdin, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trireme-nodes:", err)
		os.Exit(1)
	}
}
