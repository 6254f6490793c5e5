// Command echo is the trireme.dev/echo test workload: HTTP and UDP servers
// that answer with the pod's name (see images/internal/echo).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"trireme.dev/images/internal/echo"
)

func main() {
	httpAddr := flag.String("http", ":8080", "HTTP listen address; empty for none")
	udpAddr := flag.String("udp", ":8081", "UDP listen address; empty for none")
	name := flag.String("name", os.Getenv("POD_NAME"), "the name to answer with; default $POD_NAME, else the host name")
	askUDP := flag.String("ask-udp", "", "instead of serving, send -request to this UDP host:port and print the answer")
	request := flag.String("request", "hostname", "what -ask-udp sends: hostname, clientip or \"echo <text>\"")
	flag.Parse()
	if *askUDP != "" {
		answer, err := echo.AskUDP(*askUDP, *request, 2*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, "echo:", err)
			os.Exit(1)
		}
		fmt.Print(answer)
		return
	}
	if *name == "" {
		*name, _ = os.Hostname()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := echo.Run(ctx, *name, *httpAddr, *udpAddr); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}
