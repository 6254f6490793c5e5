// Command echo is the trireme.dev/echo test workload: HTTP and UDP servers
// that answer with the pod's name (see images/internal/echo), and a server and
// client of network measurements (images/internal/netperf).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"trireme.dev/images/internal/echo"
	"trireme.dev/images/internal/netperf"
)

func main() {
	httpAddr := flag.String("http", ":8080", "HTTP listen address; empty for none")
	udpAddr := flag.String("udp", ":8081", "UDP listen address; empty for none")
	name := flag.String("name", os.Getenv("POD_NAME"), "the name to answer with; default $POD_NAME, else the host name")
	askUDP := flag.String("ask-udp", "", "instead of serving, send -request to this UDP host:port and print the answer")
	request := flag.String("request", "hostname", "what -ask-udp sends: hostname, clientip or \"echo <text>\"")
	perfAddr := flag.String("netperf", "", "also serve network measurements on this TCP listen address")
	send := flag.String("send", "", "instead of serving, send to this measurement server's host:port for -duration and print the throughput as JSON")
	duration := flag.Duration("duration", 10*time.Second, "how long -send sends")
	rtt := flag.String("rtt", "", "instead of serving, time -count one-byte round trips to this measurement server's host:port and print them as JSON")
	count := flag.Int("count", 1000, "how many round trips -rtt makes")
	flag.Parse()
	if *send != "" || *rtt != "" {
		if err := measure(*send, *duration, *rtt, *count); err != nil {
			fmt.Fprintln(os.Stderr, "echo:", err)
			os.Exit(1)
		}
		return
	}
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
	if *perfAddr != "" {
		ln, err := net.Listen("tcp", *perfAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "echo:", err)
			os.Exit(1)
		}
		go func() {
			if err := netperf.Serve(ctx, ln); err != nil {
				fmt.Fprintln(os.Stderr, "echo: netperf:", err)
			}
		}()
	}
	if err := echo.Run(ctx, *name, *httpAddr, *udpAddr); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

// measure runs the throughput (-send) or round-trip (-rtt) measurement and
// prints its result as one JSON line.
func measure(send string, d time.Duration, rtt string, count int) error {
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	var (
		r   any
		err error
	)
	if send != "" {
		r, err = netperf.MeasureThroughput(ctx, send, d)
	} else {
		r, err = netperf.MeasureRTT(ctx, rtt, count)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}
