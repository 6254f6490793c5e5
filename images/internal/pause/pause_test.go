package pause

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	errReap := errors.New("wait4 broke")
	tests := []struct {
		name      string
		signals   []os.Signal
		reapErr   error
		wantErr   error
		wantReaps int
	}{
		{name: "SIGTERM stops cleanly", signals: []os.Signal{syscall.SIGTERM}},
		{name: "SIGINT stops cleanly", signals: []os.Signal{syscall.SIGINT}},
		{name: "SIGCHLD reaps then SIGTERM stops", signals: []os.Signal{syscall.SIGCHLD, syscall.SIGCHLD, syscall.SIGTERM}, wantReaps: 2},
		{name: "reap failure ends the loop", signals: []os.Signal{syscall.SIGCHLD, syscall.SIGTERM}, reapErr: errReap, wantErr: errReap, wantReaps: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signals := make(chan os.Signal, len(tt.signals))
			for _, s := range tt.signals {
				signals <- s
			}
			reaps := 0
			err := wait(context.Background(), signals, func() (int, error) {
				reaps++
				return 0, tt.reapErr
			})
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("wait = %v, want %v", err, tt.wantErr)
			}
			if reaps != tt.wantReaps {
				t.Errorf("reaped %d times, want %d", reaps, tt.wantReaps)
			}
		})
	}
	t.Run("context end stops the loop", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := wait(ctx, make(chan os.Signal), Reap); !errors.Is(err, context.Canceled) {
			t.Errorf("wait = %v, want context.Canceled", err)
		}
	})
}

func TestRealSignals(t *testing.T) {
	signals := notify()
	defer signal.Stop(signals)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- wait(ctx, signals, Reap) }()

	// Only the real SIGCHLD of the exiting child can get it reaped while wait runs.
	child := exec.Command("true")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	proc := "/proc/" + strconv.Itoa(child.Process.Pid)
	for {
		if _, err := os.Stat(proc); os.IsNotExist(err) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("wait returned %v before the child was reaped", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("wait = %v, want nil after SIGTERM", err)
	}
}

func TestReap(t *testing.T) {
	var pids []int
	for range 3 {
		child := exec.Command("true")
		if err := child.Start(); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, child.Process.Pid)
	}
	for _, pid := range pids {
		waitZombie(t, pid)
	}
	n, err := Reap()
	if err != nil {
		t.Fatalf("Reap: %v", err)
	}
	if n != 3 {
		t.Errorf("Reap collected %d children, want 3", n)
	}
	if n, err := Reap(); n != 0 || err != nil {
		t.Errorf("second Reap = %d, %v; want 0, nil", n, err)
	}
}

// waitZombie waits until pid has exited and is waiting to be reaped.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatalf("read stat of %d: %v", pid, err)
		}
		// The state follows the parenthesised command name.
		if fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(fields) > 0 && fields[0] == "Z" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d did not become a zombie", pid)
}
