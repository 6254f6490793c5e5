// Command trireme-apiserver serves the Kubernetes API from etcd.
package main

import (
	"os"

	"trireme.dev/apiserver/internal/app"
	"trireme.dev/componentbase/command"
)

func main() {
	os.Exit(command.Main(app.Run))
}
