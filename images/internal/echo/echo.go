// Package echo is the service-test workload of the trireme.dev/echo image: an
// HTTP and a UDP server that answer with the pod's name, the client's address
// or an echo of the request, so a test can tell which endpoint a Service
// picked and whether the client's address survived the trip.
package echo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Answer is the reply to a request: "hostname" (or nothing) gives name,
// "clientip" the client's address, "echo <text>" the text.
func Answer(name, request, client string) string {
	request = strings.TrimSpace(request)
	switch {
	case request == "clientip":
		return client
	case strings.HasPrefix(request, "echo "):
		return strings.TrimPrefix(request, "echo ")
	default:
		return name
	}
}

// Handler serves GET /, /hostname, /clientip, /echo?msg=<text> and
// /header?key=<name> (the request's header name, as agnhost's netexec: what a
// proxy in between added) over HTTP.
func Handler(name string) http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, request string, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, Answer(name, request, r.RemoteAddr))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" && r.URL.Path != "/hostname" {
			http.NotFound(w, r)
			return
		}
		reply(w, "hostname", r)
	})
	mux.HandleFunc("/clientip", func(w http.ResponseWriter, r *http.Request) { reply(w, "clientip", r) })
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) { reply(w, "echo "+r.URL.Query().Get("msg"), r) })
	mux.HandleFunc("/header", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, r.Header.Get(r.URL.Query().Get("key")))
	})
	return mux
}

// ServeUDP answers each datagram on conn until ctx ends.
func ServeUDP(ctx context.Context, conn net.PacketConn, name string) error {
	go func() {
		<-ctx.Done()
		_ = conn.Close()
	}()
	buf := make([]byte, 64<<10)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read UDP: %w", err)
		}
		if _, err := conn.WriteTo([]byte(Answer(name, string(buf[:n]), addr.String())+"\n"), addr); err != nil {
			return fmt.Errorf("answer %s: %w", addr, err)
		}
	}
}

// Run serves HTTP on httpAddr and UDP on udpAddr (either may be empty) until
// ctx ends.
func Run(ctx context.Context, name, httpAddr, udpAddr string) error {
	errs := make(chan error, 2)
	running := 0
	if httpAddr != "" {
		srv := &http.Server{Addr: httpAddr, Handler: Handler(name), ReadHeaderTimeout: 10 * time.Second}
		running++
		go func() {
			<-ctx.Done()
			_ = srv.Close()
		}()
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("HTTP on %s: %w", httpAddr, err)
				return
			}
			errs <- nil
		}()
	}
	if udpAddr != "" {
		conn, err := net.ListenPacket("udp", udpAddr)
		if err != nil {
			return fmt.Errorf("UDP on %s: %w", udpAddr, err)
		}
		running++
		go func() { errs <- ServeUDP(ctx, conn, name) }()
	}
	if running == 0 {
		return errors.New("nothing to serve: give an HTTP or a UDP address")
	}
	for ; running > 0; running-- {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// AskUDP sends request to addr over UDP and returns the first answer, for
// tests run from inside a pod (busybox's nc has no UDP).
func AskUDP(addr, request string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("udp", addr, timeout)
	if err != nil {
		return "", fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := conn.Write([]byte(request)); err != nil {
		return "", fmt.Errorf("send to %s: %w", addr, err)
	}
	buf := make([]byte, 64<<10)
	n, err := conn.Read(buf)
	if err != nil {
		return "", fmt.Errorf("answer from %s: %w", addr, err)
	}
	return string(buf[:n]), nil
}
