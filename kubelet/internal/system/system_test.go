package system

import "testing"

func TestParseMeminfo(t *testing.T) {
	m := ParseMeminfo([]byte("MemTotal:        8048576 kB\nHugePages_Total:       4\nHugepagesize:       2048 kB\nbogus\n"))
	tests := []struct {
		key  string
		want int64
	}{
		{"MemTotal", 8048576 * 1024},
		{"HugePages_Total", 4},
		{"Hugepagesize", 2 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			if m[tc.key] != tc.want {
				t.Errorf("%s = %d, want %d", tc.key, m[tc.key], tc.want)
			}
		})
	}
}
