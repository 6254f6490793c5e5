// Command trireme-proxy makes Services reachable on a node: it watches
// Services and EndpointSlices and programs nftables or iptables.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"trireme.dev/proxy/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
