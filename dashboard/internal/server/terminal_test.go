package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// echoShell stands in for a command behind pods/exec: it echoes what it
// reads, prints ^C for Ctrl-C, exits 0 on Ctrl-D and 3 on "q".
type echoShell struct {
	mu     sync.Mutex
	token  string
	url    *url.URL
	size   *remotecommand.TerminalSize
	ctxErr error
	// ended is closed when the stream returns.
	ended chan struct{}
}

// startTerminal serves a console whose pods/exec is an echoShell.
func startTerminal(t *testing.T) (*echoShell, *httptest.Server, *Server) {
	t.Helper()
	s, _, _ := newServer(t)
	e := &echoShell{ended: make(chan struct{})}
	s.Exec = e.open
	srv := httptest.NewTLSServer(s.Handler())
	t.Cleanup(srv.Close)
	return e, srv, s
}

func (e *echoShell) open(c *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.token, e.url = c.BearerToken, u
	return e, nil
}

func (e *echoShell) Stream(o remotecommand.StreamOptions) error {
	return e.StreamWithContext(context.Background(), o)
}

func (e *echoShell) StreamWithContext(ctx context.Context, o remotecommand.StreamOptions) error {
	defer close(e.ended)
	size := o.TerminalSizeQueue.Next()
	e.mu.Lock()
	e.size = size
	e.mu.Unlock()
	buf := make([]byte, 64<<10)
	for {
		n, err := o.Stdin.Read(buf)
		for _, b := range buf[:n] {
			switch b {
			case 0x03:
				_, _ = io.WriteString(o.Stdout, "^C")
			case 0x04:
				return nil
			case 'q':
				return utilexec.CodeExitError{Err: errors.New("command terminated with exit code 3"), Code: 3}
			default:
				_, _ = o.Stdout.Write([]byte{b})
			}
		}
		if err != nil {
			<-ctx.Done()
			e.mu.Lock()
			e.ctxErr = ctx.Err()
			e.mu.Unlock()
			return err
		}
	}
}

// dialTerminal opens the page's WebSocket to the pod's terminal.
func dialTerminal(t *testing.T, srv *httptest.Server, s *Server, origin, csrf string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	d := websocket.Dialer{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	hdr := http.Header{}
	if origin == "" {
		origin = "https://" + u.Host
	}
	if origin != "-" {
		hdr.Set("Origin", origin)
	}
	hdr.Add("Cookie", (&http.Cookie{Name: CSRFCookie, Value: csrfValue}).String())
	hdr.Add("Cookie", sessionCookie(t, s, "good").String())
	q := url.Values{"csrf": {csrf}, "container": {"app"}, "cols": {"100"}, "rows": {"30"}}
	return d.DialContext(t.Context(), "wss://"+u.Host+"/api/exec/shop/web-1?"+q.Encode(), hdr)
}

func TestTerminalRefusals(t *testing.T) {
	e, srv, s := startTerminal(t)
	for _, tc := range []struct {
		name, origin, csrf string
	}{
		{"other site", "https://evil.example", csrfValue},
		{"no origin", "-", csrfValue},
		{"no CSRF token", "", ""},
		{"wrong CSRF token", "", strings.Repeat("f", 64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp, err := dialTerminal(t, srv, s, tc.origin, tc.csrf)
			if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("dial = %v, %+v; want 403", err, resp)
			}
		})
	}
	if e.url != nil {
		t.Fatalf("a refused terminal reached pods/exec: %s", e.url)
	}
}

func TestTerminal(t *testing.T) {
	read := func(t *testing.T, ws *websocket.Conn, want string) {
		t.Helper()
		var got []byte
		for !bytes.Contains(got, []byte(want)) {
			typ, data, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("read: %v (got %q, want %q)", err, got, want)
			}
			if typ != websocket.BinaryMessage {
				t.Fatalf("text message %s before %q", data, want)
			}
			got = append(got, data...)
		}
	}
	end := func(t *testing.T, ws *websocket.Conn) TerminalEnd {
		t.Helper()
		for {
			typ, data, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("no end message: %v", err)
			}
			if typ == websocket.TextMessage {
				var e TerminalEnd
				if err := json.Unmarshal(data, &e); err != nil {
					t.Fatal(err)
				}
				return e
			}
		}
	}

	t.Run("keys, Ctrl-C and Ctrl-D reach the command as the user", func(t *testing.T) {
		e, srv, s := startTerminal(t)
		ws, _, err := dialTerminal(t, srv, s, "", csrfValue)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ws.Close() }()
		for _, tc := range []struct{ send, want string }{{"echo hi", "echo hi"}, {"\x03", "^C"}} {
			if err := ws.WriteMessage(websocket.BinaryMessage, []byte(tc.send)); err != nil {
				t.Fatal(err)
			}
			read(t, ws, tc.want)
		}
		if err := ws.WriteMessage(websocket.BinaryMessage, []byte{0x04}); err != nil {
			t.Fatal(err)
		}
		if got := end(t, ws); got != (TerminalEnd{ExitCode: 0}) {
			t.Fatalf("end = %+v", got)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.token != "good" {
			t.Errorf("pods/exec as %q, want the user's token", e.token)
		}
		if want := "/api/v1/namespaces/shop/pods/web-1/exec"; e.url.Path != want {
			t.Errorf("path %s, want %s", e.url.Path, want)
		}
		if q := e.url.Query(); q.Get("container") != "app" || q.Get("tty") != "true" || q.Get("stdin") != "true" || q.Get("command") != "sh" {
			t.Errorf("query %s", e.url.RawQuery)
		}
		if e.size == nil || e.size.Width != 100 || e.size.Height != 30 {
			t.Errorf("first size %+v, want 100x30", e.size)
		}
	})

	t.Run("exit code", func(t *testing.T) {
		_, srv, s := startTerminal(t)
		ws, _, err := dialTerminal(t, srv, s, "", csrfValue)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ws.Close() }()
		if err := ws.WriteMessage(websocket.BinaryMessage, []byte("q")); err != nil {
			t.Fatal(err)
		}
		if got := end(t, ws); got.ExitCode != 3 || got.Error != "" {
			t.Fatalf("end = %+v, want exit code 3", got)
		}
	})

	t.Run("a message over the cap ends the session", func(t *testing.T) {
		e, srv, s := startTerminal(t)
		ws, _, err := dialTerminal(t, srv, s, "", csrfValue)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ws.Close() }()
		if err := ws.WriteMessage(websocket.BinaryMessage, bytes.Repeat([]byte("x"), MaxTerminalMessage+1)); err != nil {
			t.Fatal(err)
		}
		for {
			_, _, err := ws.ReadMessage()
			if err == nil {
				continue
			}
			if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
				t.Fatalf("closed with %v, want 1009", err)
			}
			break
		}
		// The command's stream is cancelled, not left running.
		<-e.ended
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.ctxErr == nil {
			t.Fatal("the exec stream was not cancelled")
		}
	})
}
