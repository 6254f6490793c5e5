// Command trireme-proxy makes Services reachable on a node: it watches
// Services and EndpointSlices and programs nftables or iptables.
package main

import (
	"os"

	"trireme.dev/componentbase/command"
	"trireme.dev/proxy/internal/app"
)

func main() {
	os.Exit(command.Main(app.Run))
}
