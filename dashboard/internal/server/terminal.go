package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// MaxTerminalMessage caps one message from the page's terminal: keys and
// pastes are small, and a larger one closes the session (1009).
const MaxTerminalMessage = 1 << 20

// ExecutorFunc opens a pods/exec stream at u as the user c names.
type ExecutorFunc func(c *rest.Config, u *url.URL) (remotecommand.Executor, error)

// execExecutor is kubectl's choice: WebSocket (v5.channel.k8s.io), and
// SPDY when the apiserver refuses the upgrade.
func execExecutor(c *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	ws, err := remotecommand.NewWebSocketExecutor(c, http.MethodGet, u.String())
	if err != nil {
		return nil, fmt.Errorf("websocket executor: %w", err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(c, http.MethodPost, u)
	if err != nil {
		return nil, fmt.Errorf("spdy executor: %w", err)
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// TerminalEnd is the last text message of a terminal session.
type TerminalEnd struct {
	// ExitCode is the command's exit status; -1 when it is unknown.
	ExitCode int `json:"exitCode"`
	// Error is why the session ended, when not by the command's exit.
	Error string `json:"error,omitempty"`
}

// terminalSize is the page's resize message.
type terminalSize struct {
	Cols uint16 `json:"cols"`
	Rows uint16 `json:"rows"`
}

// sizeQueue hands the page's resizes to the executor; Next returns nil
// once the session ends.
type sizeQueue struct {
	ch  chan remotecommand.TerminalSize
	ctx context.Context
}

func (q sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.ch:
		return &s
	case <-q.ctx.Done():
		return nil
	}
}

// wsWriter sends each write as one binary message; gorilla allows one
// writer at a time.
type wsWriter struct {
	mu *sync.Mutex
	ws *websocket.Conn
}

func (w wsWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.ws.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if err := w.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// terminalGuard admits a WebSocket only from this console's own page: the
// browser always sends Origin on a WebSocket handshake, and the CSRF token
// comes in the query, since a page cannot set headers on one.
func terminalGuard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r.Header.Get("Origin"), r.Host) {
			writeStatus(w, http.StatusForbidden, "cross-origin terminal refused")
			return
		}
		if !csrfMatches(r, r.URL.Query().Get("csrf")) {
			writeStatus(w, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		next(w, r)
	}
}

// terminal runs a command in a pod's container with a TTY, as the user,
// relaying the page's WebSocket: binary messages are the keys typed
// (Ctrl-C and Ctrl-D are bytes like any other, the TTY makes them signals
// and end of file), text messages resizes; output comes back as binary
// messages and the end as a TerminalEnd.
func (s *Server) terminal(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	command := q["command"]
	if len(command) == 0 {
		command = []string{"sh"}
	}
	c := userConfig(r)
	u, err := url.Parse(strings.TrimSuffix(c.Host, "/") + fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/exec", url.PathEscape(r.PathValue("namespace")), url.PathEscape(r.PathValue("pod"))))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, err.Error())
		return
	}
	eq := url.Values{"command": command, "stdin": {"true"}, "stdout": {"true"}, "tty": {"true"}}
	if ct := q.Get("container"); ct != "" {
		eq.Set("container", ct)
	}
	u.RawQuery = eq.Encode()
	newExec := s.Exec
	if newExec == nil {
		newExec = execExecutor
	}
	ex, err := newExec(c, u)
	if err != nil {
		writeError(w, err)
		return
	}
	up := websocket.Upgrader{
		// terminalGuard has checked Origin already.
		CheckOrigin: func(r *http.Request) bool { return sameOrigin(r.Header.Get("Origin"), r.Host) },
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		// Upgrade has answered the client already.
		return
	}
	defer func() { _ = ws.Close() }()
	ws.SetReadLimit(MaxTerminalMessage)
	// The session outlives the handshake's request context only by what the
	// page does: it ends when the page goes or the command exits.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	stdin, keys := io.Pipe()
	sizes := sizeQueue{ch: make(chan remotecommand.TerminalSize, 1), ctx: ctx}
	if cols, rows := atoiSize(q.Get("cols")), atoiSize(q.Get("rows")); cols > 0 && rows > 0 {
		sizes.ch <- remotecommand.TerminalSize{Width: cols, Height: rows}
	}
	readErr := make(chan error, 1)
	go func() {
		readErr <- s.readKeys(ws, keys, sizes.ch)
		// The page is gone or broke the limit: end the command's session.
		cancel()
	}()
	var mu sync.Mutex
	out := wsWriter{mu: &mu, ws: ws}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: out, Tty: true, TerminalSizeQueue: sizes})
	_ = keys.Close()
	end := TerminalEnd{ExitCode: 0}
	var exitErr utilexec.CodeExitError
	switch {
	case errors.As(err, &exitErr):
		end.ExitCode = exitErr.Code
	case err != nil:
		end.ExitCode = -1
		end.Error = err.Error()
		select {
		case rerr := <-readErr:
			if rerr != nil {
				end.Error = rerr.Error()
			}
		default:
		}
	}
	s.Log.V(2).Info("Terminal ended", "namespace", r.PathValue("namespace"), "pod", r.PathValue("pod"), "exitCode", end.ExitCode, "err", end.Error)
	msg, _ := json.Marshal(end)
	mu.Lock()
	_ = ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_ = ws.WriteMessage(websocket.TextMessage, msg)
	_ = ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	mu.Unlock()
}

// readKeys copies the page's keys into the command's stdin until the page
// closes, and its resizes into sizes (the newest wins).
func (s *Server) readKeys(ws *websocket.Conn, keys *io.PipeWriter, sizes chan remotecommand.TerminalSize) error {
	for {
		typ, data, err := ws.ReadMessage()
		if err != nil {
			_ = keys.CloseWithError(io.EOF)
			if errors.Is(err, websocket.ErrReadLimit) {
				return fmt.Errorf("a terminal message is limited to %d bytes", MaxTerminalMessage)
			}
			return nil
		}
		switch typ {
		case websocket.BinaryMessage:
			if _, err := keys.Write(data); err != nil {
				return nil
			}
		case websocket.TextMessage:
			var sz terminalSize
			if json.Unmarshal(data, &sz) != nil || sz.Cols == 0 || sz.Rows == 0 {
				continue
			}
			select {
			case <-sizes:
			default:
			}
			sizes <- remotecommand.TerminalSize{Width: sz.Cols, Height: sz.Rows}
		}
	}
}

func atoiSize(s string) uint16 {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}
