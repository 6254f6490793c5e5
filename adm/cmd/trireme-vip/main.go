// Command trireme-vip holds the control plane's virtual IP on the node whose
// manager holds the kube-system Lease (triremeadm runs it as a static pod);
// `trireme-vip loadbalancer` is its DaemonSet mode, which announces the
// LoadBalancer Services' addresses from the nodes.
package main

import (
	"context"
	"os"

	"trireme.dev/adm/internal/lbannounce"
	"trireme.dev/adm/internal/vip"
	"trireme.dev/componentbase/command"
)

func main() {
	os.Exit(command.Main(run))
}

func run(ctx context.Context, args []string, streams command.Streams) error {
	if len(args) > 0 && args[0] == "loadbalancer" {
		return lbannounce.Run(ctx, args[1:], streams)
	}
	return vip.Run(ctx, args, streams)
}
