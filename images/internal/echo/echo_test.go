package echo

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAnswer(t *testing.T) {
	tests := []struct{ request, want string }{
		{"", "web-1"},
		{"hostname", "web-1"},
		{"hostname\n", "web-1"},
		{"clientip", "10.0.0.9:4000"},
		{"echo hello there", "hello there"},
		{"something else", "web-1"},
	}
	for _, tt := range tests {
		if got := Answer("web-1", tt.request, "10.0.0.9:4000"); got != tt.want {
			t.Errorf("Answer(%q) = %q, want %q", tt.request, got, tt.want)
		}
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(Handler("web-1"))
	defer srv.Close()
	tests := []struct {
		path, want string
		status     int
	}{
		{"/", "web-1\n", 200},
		{"/hostname", "web-1\n", 200},
		{"/echo?msg=hi", "hi\n", 200},
		{"/clientip", "127.0.0.1:", 200},
		{"/header?key=User-Agent", "Go-http-client/1.1\n", 200},
		{"/header?key=X-Forwarded-For", "\n", 200},
		{"/nope", "404 page not found\n", 404},
	}
	for _, tt := range tests {
		resp, err := srv.Client().Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.HasPrefix(string(body), tt.want) {
			t.Errorf("GET %s = %d %q, want %d %q", tt.path, resp.StatusCode, body, tt.status, tt.want)
		}
	}
}

func TestServeUDP(t *testing.T) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeUDP(ctx, conn, "web-1") }()
	for request, want := range map[string]string{"hostname": "web-1\n", "echo ping": "ping\n"} {
		got, err := AskUDP(conn.LocalAddr().String(), request, 5*time.Second)
		if err != nil || got != want {
			t.Errorf("UDP %q = %q, %v; want %q", request, got, err, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServeUDP after cancel: %v", err)
	}
}

func TestRunNeedsAnAddress(t *testing.T) {
	if err := Run(context.Background(), "x", "", ""); err == nil {
		t.Error("Run with no address succeeded")
	}
}
