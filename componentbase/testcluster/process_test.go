package testcluster

import (
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestProcessStop(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr string
	}{
		{name: "exits on SIGTERM", script: "exec sleep 60"},
		{name: "killed after ignoring SIGTERM", script: `trap "" TERM; sleep 60 & wait; sleep 60`, wantErr: "ignored SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := StartProcess("/bin/sh", []string{"-c", tt.script}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			// Give the shell time to install its trap before signalling it.
			time.Sleep(200 * time.Millisecond)
			err = p.Stop(500 * time.Millisecond)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Stop() = %v, want nil", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Stop() = %v, want error containing %q", err, tt.wantErr)
			}
			select {
			case <-p.Exited():
			default:
				t.Fatal("process still running after Stop")
			}
			if err := syscall.Kill(p.PID(), 0); err == nil {
				t.Fatalf("pid %d still exists after Stop", p.PID())
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "under the limit keeps all", writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "over the limit keeps the tail", writes: []string{"abcdef", "gh"}, want: "[... earlier output dropped ...]\ncdefgh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewTailBuffer(6)
			for _, w := range tt.writes {
				b.Write([]byte(w))
			}
			if got := b.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBinaryMissingNamesMakeBuild(t *testing.T) {
	t.Setenv(BinDirEnv, t.TempDir())
	_, err := Binary(APIServerBinary)
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("Binary() error = %v, want one naming `make build`", err)
	}
}
