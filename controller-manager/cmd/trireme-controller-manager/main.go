// Command trireme-controller-manager runs the controllers that reconcile
// the cluster's built-in objects.
package main

import (
	"os"

	"trireme.dev/controller-manager/internal/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
