// Command trireme-vip holds the control plane's virtual IP on the node whose
// manager holds the kube-system Lease; triremeadm runs it as a static pod.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"trireme.dev/adm/internal/vip"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := vip.Main(ctx); err != nil {
		os.Exit(1)
	}
}
