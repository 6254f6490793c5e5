package load

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    Memory
		wantErr bool
	}{
		{
			name:   "both present",
			status: "Name:\ttrireme-apiserver\nVmPeak:\t 2000000 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t12\n",
			want:   Memory{RSS: 100 << 20, HWM: 200 << 20},
		},
		{
			name:   "anon and file split",
			status: "VmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nRssAnon:\t   61440 kB\nRssFile:\t   40960 kB\n",
			want:   Memory{RSS: 100 << 20, HWM: 200 << 20, Anon: 60 << 20, File: 40 << 20},
		},
		{name: "kernel thread has neither", status: "Name:\tkthreadd\nThreads:\t1\n", wantErr: true},
		{name: "unexpected unit", status: "VmHWM:\t1 MB\nVmRSS:\t1 kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus(strings.NewReader(tt.status))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStatus() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("parseStatus() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadMemoryOfSelf(t *testing.T) {
	m, err := ReadMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS == 0 || m.HWM < m.RSS {
		t.Fatalf("ReadMemory(self) = %+v, want 0 < RSS <= HWM", m)
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    time.Duration
		wantErr bool
	}{
		{
			name: "name with spaces and parentheses",
			stat: "4242 (trireme (api) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 1000 100",
			want: 3 * time.Second,
		},
		{name: "truncated", stat: "4242 (x) S 1 2", wantErr: true},
		{name: "no name", stat: "garbage", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat(tt.stat)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStat() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("parseStat() = %v, want %v", got, tt.want)
			}
		})
	}
}
