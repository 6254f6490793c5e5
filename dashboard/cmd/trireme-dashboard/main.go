// Command trireme-dashboard serves the cluster's web console, acting only
// with the signed-in user's credentials.
package main

import (
	"os"

	"trireme.dev/componentbase/command"
	"trireme.dev/dashboard/internal/app"
)

func main() {
	os.Exit(command.Main(app.Run))
}
