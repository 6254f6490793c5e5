package supervisor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testwait"
)

// The test binary acts as `triremeadm supervise` when asked to.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Marker {
		var name, pidFile string
		args := os.Args[2:]
		for len(args) > 0 && args[0] != "--" {
			switch args[0] {
			case "--name":
				name = args[1]
			case "--pid-file":
				pidFile = args[1]
			}
			args = args[2:]
		}
		if err := Run(name, pidFile, args[1:], os.Stdout, 5*time.Second); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStartStop(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "sleeper", PIDFile: filepath.Join(dir, "run/sleeper.pid"), LogFile: filepath.Join(dir, "log/sleeper.log"),
		Command: []string{"/bin/sh", "-c", "echo started; exec sleep 300"}}
	t.Cleanup(func() { Stop(spec.PIDFile, 5*time.Second) })
	pid, err := Start(self, spec, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := Running(spec.PIDFile); !ok || got != pid {
		t.Fatalf("Running = %d %v, want %d", got, ok, pid)
	}
	if _, err := Start(self, spec, time.Second); err == nil || !strings.Contains(err.Error(), "already supervised") {
		t.Errorf("second Start: %v", err)
	}
	if got, err := Command(spec.PIDFile); err != nil || !slices.Equal(got, spec.Command) {
		t.Errorf("Command = %q, %v; want %q", got, err, spec.Command)
	}
	testwait.ForTrue(t, 10*time.Second, "the child's PID file", func() bool { _, err := ReadPID(spec.PIDFile + ".child"); return err == nil })
	child, _ := ReadPID(spec.PIDFile + ".child")
	stopped, err := Stop(spec.PIDFile, 5*time.Second)
	if err != nil || !stopped {
		t.Fatalf("Stop = %v, %v", stopped, err)
	}
	if !Gone(pid) {
		t.Errorf("supervisor %d still running", pid)
	}
	testwait.ForTrue(t, 10*time.Second, "the child gone", func() bool { return Gone(child) })
	if _, err := os.Stat(spec.PIDFile); err == nil {
		t.Error("PID file left behind")
	}
	log, _ := os.ReadFile(spec.LogFile)
	if !strings.Contains(string(log), "started") || !strings.Contains(string(log), "stopping sleeper") {
		t.Errorf("log:\n%s", log)
	}
	// Stopping again, or a stale PID file naming another process, is harmless.
	os.WriteFile(spec.PIDFile, []byte("1\n"), 0o644)
	if _, err := Command(spec.PIDFile); err == nil {
		t.Error("Command of a PID file naming a process that is not ours succeeded")
	}
	if stopped, err := Stop(spec.PIDFile, time.Second); err != nil || stopped {
		t.Errorf("Stop of a PID file naming a process that is not ours = %v, %v", stopped, err)
	}
}
