package tcprto

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCapAndRestore(t *testing.T) {
	tests := []struct {
		name    string
		current string // "" means the kernel has no such sysctl
		want    Result
		// after is the sysctl's value after Cap, then after Restore.
		afterCap, afterRestore string
	}{
		{name: "kernel default", current: "120000", want: Capped, afterCap: "1000", afterRestore: "120000"},
		{name: "already capped", current: "1000\n", want: Capped, afterCap: "1000", afterRestore: "120000"},
		{name: "an administrator's value", current: "5000", want: KeptAdmins, afterCap: "5000", afterRestore: "5000"},
		{name: "kernel before 6.15", current: "", want: Unsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			h := Host{ProcSys: filepath.Join(dir, "proc"), ConfFile: filepath.Join(dir, "etc/sysctl.d/90.conf")}
			sysctl := filepath.Join(h.ProcSys, Key)
			if tt.current != "" {
				if err := os.MkdirAll(filepath.Dir(sysctl), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(sysctl, []byte(tt.current), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, _, err := h.Cap()
			if err != nil || got != tt.want {
				t.Fatalf("Cap() = %v, %v; want %v", got, err, tt.want)
			}
			if tt.current == "" {
				if _, err := os.Stat(h.ConfFile); !os.IsNotExist(err) {
					t.Errorf("Cap wrote %s on a kernel without the sysctl", h.ConfFile)
				}
				return
			}
			check := func(when, want string) {
				t.Helper()
				data, _ := os.ReadFile(sysctl)
				if strings.TrimSpace(string(data)) != want {
					t.Errorf("%s: sysctl = %q, want %s", when, data, want)
				}
			}
			check("after Cap", tt.afterCap)
			conf, err := os.ReadFile(h.ConfFile)
			if wrote := err == nil; wrote != (tt.want == Capped) {
				t.Errorf("%s written: %v, want %v", h.ConfFile, wrote, tt.want == Capped)
			}
			if tt.want == Capped && !strings.Contains(string(conf), "net.ipv4.tcp_rto_max_ms = "+strconv.Itoa(Max)) {
				t.Errorf("%s = %q", h.ConfFile, conf)
			}
			undone, err := h.Restore()
			if err != nil || undone != (tt.want == Capped) {
				t.Fatalf("Restore() = %v, %v", undone, err)
			}
			check("after Restore", tt.afterRestore)
			if _, err := os.Stat(h.ConfFile); !os.IsNotExist(err) {
				t.Errorf("Restore left %s", h.ConfFile)
			}
		})
	}
}

func TestInNamedNetns(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self")
	other := filepath.Join(dir, "other")
	for _, f := range []string{self, other} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	named := filepath.Join(dir, "named")
	if err := os.Mkdir(named, 0o755); err != nil {
		t.Fatal(err)
	}
	if inNamedNetns(self, named) {
		t.Error("an empty directory names the namespace")
	}
	// A hard link stands for a bind mount: the same file under another name.
	if err := os.Link(other, filepath.Join(named, "node1")); err != nil {
		t.Fatal(err)
	}
	if inNamedNetns(self, named) {
		t.Error("another namespace's name matched")
	}
	if err := os.Link(self, filepath.Join(named, "node2")); err != nil {
		t.Fatal(err)
	}
	if !inNamedNetns(self, named) {
		t.Error("the namespace's own name did not match")
	}
	if inNamedNetns(self, filepath.Join(dir, "missing")) {
		t.Error("a missing directory names the namespace")
	}
}
