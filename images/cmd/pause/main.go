// Command pause is the pod sandbox container: it sleeps until told to stop, reaping
// zombies as PID 1. Built static (CGO_ENABLED=0) for the trireme.dev/pause image.
package main

import (
	"context"
	"fmt"
	"os"

	"trireme.dev/images/internal/pause"
)

func main() {
	if err := pause.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "pause:", err)
		os.Exit(1)
	}
}
