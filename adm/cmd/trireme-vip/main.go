// Command trireme-vip holds the control plane's virtual IP on the node whose
// manager holds the kube-system Lease; triremeadm runs it as a static pod.
package main

import (
	"os"

	"trireme.dev/adm/internal/vip"
	"trireme.dev/componentbase/command"
)

func main() {
	os.Exit(command.Main(vip.Run))
}
