package testcluster

import (
	"bytes"
	"io"
	"sync"
)

// forbiddenWatch passes a process's output on and keeps each line in which
// the apiserver refused a request with RBAC (`is forbidden: User "...`;
// admission refusals such as a terminating namespace do not count): a controller
// that lacks a permission in its least-privilege role shows up there long
// before a test times out on its effect. It also keeps each line that
// mentions a panic (Go's "panic: ..." header, client-go's "Observed a
// panic"), which a test of bad input checks for.
type forbiddenWatch struct {
	out     io.Writer
	mu      sync.Mutex
	partial []byte
	lines   []string
	panics  []string
}

// maxWatchedLines bounds each kind of line a forbiddenWatch keeps.
const maxWatchedLines = 100

// Write implements io.Writer.
func (w *forbiddenWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := w.partial[:i]
		if (bytes.Contains(line, []byte(`is forbidden: User \"`)) || bytes.Contains(line, []byte(`is forbidden: User "`))) && len(w.lines) < maxWatchedLines {
			w.lines = append(w.lines, string(line))
		}
		if bytes.Contains(line, []byte("panic")) && len(w.panics) < maxWatchedLines {
			w.panics = append(w.panics, string(line))
		}
		w.partial = w.partial[i+1:]
	}
	w.mu.Unlock()
	return w.out.Write(p)
}

// Lines returns the forbidden lines seen so far (at most 100).
func (w *forbiddenWatch) Lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// Panics returns the lines mentioning a panic seen so far (at most 100).
func (w *forbiddenWatch) Panics() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.panics...)
}
