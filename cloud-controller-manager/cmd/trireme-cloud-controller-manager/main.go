// Command trireme-cloud-controller-manager initializes nodes from the
// machine inventory and gives LoadBalancer Services their addresses.
package main

import (
	"os"

	"trireme.dev/cloud-controller-manager/internal/app"
	"trireme.dev/componentbase/command"
)

func main() {
	os.Exit(command.Main(app.Run))
}
