package testcluster

import (
	"strings"
	"sync"
)

// LogBuffer keeps a process's output for failure messages: safe for the
// process's writers and the test's readers at once, and bounded (past 8
// MiB it keeps the newer half).
type LogBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write implements io.Writer.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 8<<20 {
		s := l.b.String()
		l.b.Reset()
		l.b.WriteString(s[len(s)/2:])
	}
	return l.b.Write(p)
}

// String returns what the buffer holds.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tail returns its last n lines.
func (l *LogBuffer) Tail(n int) string { return Tail(l.String(), n) }

// Tail returns the last n lines of s, for failure messages that quote a
// command's or a process's output.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
