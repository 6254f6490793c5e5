// Command apiload measures a Kubernetes-compatible apiserver under load; see
// package trireme.dev/e2e/internal/load.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"trireme.dev/e2e/internal/load"
)

func main() {
	cfg := load.DefaultConfig()
	cfg.AddFlags(flag.CommandLine)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := load.Run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apiload:", err)
		os.Exit(1)
	}
}
