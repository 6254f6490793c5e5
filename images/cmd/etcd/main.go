// Command etcd is etcd itself — go.etcd.io/etcd/server/v3/etcdmain, the version the
// apiserver embeds — built static (CGO_ENABLED=0) for the trireme.dev/etcd image
// that triremeadm's etcd static pod runs. Flags are etcd's own.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
