// Command trireme-scheduler places pending pods on nodes, with
// kube-scheduler's plugins, events and configuration file.
package main

import (
	"os"

	"trireme.dev/componentbase/command"
	"trireme.dev/scheduler/internal/app"
)

func main() {
	os.Exit(command.Main(app.Run))
}
