// Command trireme-apiserver serves the Kubernetes API from etcd.
package main

import (
	"os"

	"trireme.dev/apiserver/internal/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
