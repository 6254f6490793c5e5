package memtrim

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestReadOnlyMappings(t *testing.T) {
	const exe = "/usr/local/bin/trireme-apiserver"
	tests := []struct {
		name    string
		maps    string
		want    []mapping
		wantErr bool
	}{
		{
			name: "text and rodata, not data, heap or other files",
			maps: "00400000-02f74000 r-xp 00000000 00:2a 123 /usr/local/bin/trireme-apiserver\n" +
				"02f74000-06313000 r--p 02b74000 00:2a 123 /usr/local/bin/trireme-apiserver\n" +
				"06313000-063f9000 rw-p 05f13000 00:2a 123 /usr/local/bin/trireme-apiserver\n" +
				"063f9000-08400000 rw-p 00000000 00:00 0 \n" +
				"7f00000000-7f00001000 r--p 00000000 00:2a 9 /usr/lib/other.so\n",
			want: []mapping{{0x400000, 0x2f74000}, {0x2f74000, 0x6313000}},
		},
		{
			name: "a deleted executable of the same path is not ours",
			maps: "00400000-00401000 r-xp 00000000 00:2a 1 /usr/local/bin/trireme-apiserver (deleted)\n",
		},
		{
			name:    "bad range",
			maps:    "zz-00401000 r-xp 00000000 00:2a 1 /usr/local/bin/trireme-apiserver\n",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readOnlyMappings(strings.NewReader(tt.maps), exe)
			if (err != nil) != tt.wantErr {
				t.Fatalf("readOnlyMappings() error = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("readOnlyMappings() = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("readOnlyMappings() = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestIsIdle(t *testing.T) {
	tests := []struct {
		name            string
		prev, cur, idle uint64
		want            bool
	}{
		{name: "little allocated", prev: 100 << 20, cur: 120 << 20, idle: 64 << 20, want: true},
		{name: "busy", prev: 100 << 20, cur: 2 << 30, idle: 64 << 20, want: false},
		{name: "exactly the threshold is busy", prev: 0, cur: 64 << 20, idle: 64 << 20, want: false},
		{name: "counter went back", prev: 100, cur: 50, idle: 64 << 20, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isIdle(tt.prev, tt.cur, tt.idle); got != tt.want {
				t.Fatalf("isIdle(%d, %d, %d) = %v, want %v", tt.prev, tt.cur, tt.idle, got, tt.want)
			}
		})
	}
}

func TestTrimExecutable(t *testing.T) {
	// The test binary's own text: trimming it must not break it, and must
	// leave less of it resident, whoever owns the file, with and without the
	// page-out. Each way runs in a fresh process of this test binary, whose
	// start-up has left its pages mapped.
	if mode := os.Getenv("MEMTRIM_TEST_PAGEOUT"); mode != "" {
		before := residentFileKiB(t)
		n, err := trimExecutable(mode == "true")
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("found no read-only mapping of the test binary")
		}
		if after := residentFileKiB(t); after >= before {
			t.Fatalf("resident file pages %d KiB before, %d KiB after: want fewer", before, after)
		}
		return
	}
	for _, pageOut := range []string{"true", "false"} {
		t.Run("pageOut="+pageOut, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestTrimExecutable$", "-test.count=1")
			cmd.Env = append(os.Environ(), "MEMTRIM_TEST_PAGEOUT="+pageOut)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// residentFileKiB is the process's RssFile.
func residentFileKiB(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			kib, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("RssFile %q: %v", v, err)
			}
			return kib
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
