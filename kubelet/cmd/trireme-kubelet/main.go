// Command trireme-kubelet is the node agent: it registers the node and runs
// the pods bound to it in containers through the CRI.
package main

import (
	"os"

	"trireme.dev/componentbase/command"
	"trireme.dev/kubelet/internal/app"
)

func main() {
	os.Exit(command.Main(app.Run))
}
