// Command triremeadm installs Trireme on a machine the way kubeadm installs
// Kubernetes: `init` a control-plane node in named phases, `reset` it, manage
// bootstrap tokens, certificates and images.
package main

import (
	"os"

	"trireme.dev/adm/internal/app"
	"trireme.dev/componentbase/command"
)

func main() {
	os.Exit(command.Main(app.Run))
}
