// Command image-registry serves image archives as a registry; see app.
package main

import (
	"os"

	"trireme.dev/images/cmd/image-registry/app"
)

func main() {
	os.Exit(app.Main())
}
