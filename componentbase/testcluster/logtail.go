package testcluster

import "sync"

// TailBuffer keeps the last max bytes written to it: enough of a server's log
// to explain a failure without holding everything a long suite produced.
type TailBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	lost bool
}

// NewTailBuffer returns a buffer keeping the last max bytes.
func NewTailBuffer(max int) *TailBuffer { return &TailBuffer{max: max} }

// Write implements io.Writer; it never fails.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.lost = true
	}
	return len(p), nil
}

// String returns the kept tail, marked when older output was dropped.
func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost {
		return "[... earlier output dropped ...]\n" + string(b.buf)
	}
	return string(b.buf)
}
