// Command trireme-netpol enforces NetworkPolicies on a node: it compiles
// them into one nftables table.
package main

import (
	"os"

	"trireme.dev/componentbase/command"
	"trireme.dev/netpol/internal/app"
)

func main() {
	os.Exit(command.Main(app.Run))
}
