// Command image-build writes a one-layer image archive from host files; see app.
package main

import (
	"os"

	"trireme.dev/images/cmd/image-build/app"
)

func main() {
	os.Exit(app.Main())
}
