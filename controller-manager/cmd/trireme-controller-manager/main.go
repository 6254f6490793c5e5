// Command trireme-controller-manager runs the controllers that reconcile
// the cluster's built-in objects.
package main

import (
	"os"

	"trireme.dev/componentbase/command"
	"trireme.dev/controller-manager/internal/app"
)

func main() {
	os.Exit(command.Main(app.Run))
}
