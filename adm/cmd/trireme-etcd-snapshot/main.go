// Command trireme-etcd-snapshot snapshots the local etcd member on a
// schedule; triremeadm runs it as the etcd-snapshot static pod, from the etcd
// image.
package main

import (
	"os"

	"trireme.dev/adm/internal/etcdsnapshot"
	"trireme.dev/componentbase/command"
)

func main() {
	os.Exit(command.Main(etcdsnapshot.RunSchedule))
}
