package healthcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// ProxyHealth tracks whether syncs keep up. A change queued and not
// followed by a successful sync within Timeout makes the proxy unhealthy.
type ProxyHealth struct {
	Timeout time.Duration
	now     func() time.Time

	mu          sync.Mutex
	oldestQueue time.Time
	lastSync    time.Time
}

// NewProxyHealth fails health after timeout without a sync.
func NewProxyHealth(timeout time.Duration) *ProxyHealth {
	return &ProxyHealth{Timeout: timeout, now: time.Now}
}

// Queued records that a change waits for a sync.
func (h *ProxyHealth) Queued() {
	h.mu.Lock()
	if h.oldestQueue.IsZero() {
		h.oldestQueue = h.now()
	}
	h.mu.Unlock()
}

// Synced records a successful sync that applied everything queued before
// it started.
func (h *ProxyHealth) Synced(started time.Time) {
	h.mu.Lock()
	h.lastSync = h.now()
	if !h.oldestQueue.IsZero() && !h.oldestQueue.After(started) {
		h.oldestQueue = time.Time{}
	}
	h.mu.Unlock()
}

// Healthy reports the state and the times behind it.
func (h *ProxyHealth) Healthy() (ok bool, lastSync, oldestQueued time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok = h.oldestQueue.IsZero() || h.now().Sub(h.oldestQueue) < h.Timeout
	return ok, h.lastSync, h.oldestQueue
}

// ServeHTTP answers /healthz and /livez as kube-proxy does: 200 or 503
// with a small JSON document.
func (h *ProxyHealth) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	ok, last, queued := h.Healthy()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	body := map[string]any{"lastUpdated": last, "currentTime": h.now(), "healthy": ok}
	if !queued.IsZero() {
		body["oldestPendingChange"] = queued
	}
	_ = json.NewEncoder(w).Encode(body)
}

// Mux returns the 10256 handler.
func (h *ProxyHealth) Mux() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/healthz", h)
	mux.Handle("/livez", h)
	return mux
}

// String is for logs.
func (h *ProxyHealth) String() string {
	ok, last, _ := h.Healthy()
	return fmt.Sprintf("healthy=%v lastSync=%s", ok, last.Format(time.RFC3339))
}
