package healthcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// ProxyHealth tracks whether syncs keep up, per IP family. A change
// queued and not followed, in every family, by a successful sync within
// Timeout makes the proxy unhealthy: in a dual-stack proxy one family
// whose syncs fail is enough, as upstream kube-proxy reports it.
type ProxyHealth struct {
	Timeout time.Duration
	now     func() time.Time

	mu       sync.Mutex
	families []string
	state    map[string]*familyHealth
}

type familyHealth struct {
	oldestQueue time.Time
	lastSync    time.Time
}

// NewProxyHealth fails health after timeout without a sync. families
// names the IP families the proxy serves ("IPv4", "IPv6"); none means one
// unnamed family, as a single-stack proxy.
func NewProxyHealth(timeout time.Duration, families ...string) *ProxyHealth {
	if len(families) == 0 {
		families = []string{""}
	}
	h := &ProxyHealth{Timeout: timeout, now: time.Now, families: families, state: map[string]*familyHealth{}}
	for _, f := range families {
		h.state[f] = &familyHealth{}
	}
	return h
}

// Queued records that a change waits for a sync in every family.
func (h *ProxyHealth) Queued() {
	h.mu.Lock()
	now := h.now()
	for _, s := range h.state {
		if s.oldestQueue.IsZero() {
			s.oldestQueue = now
		}
	}
	h.mu.Unlock()
}

// Synced records a successful sync of every family that applied
// everything queued before it started.
func (h *ProxyHealth) Synced(started time.Time) {
	for _, f := range h.families {
		h.SyncedFamily(f, started)
	}
}

// SyncedFamily records a successful sync of family f (a name given to
// NewProxyHealth) that applied everything queued before it started.
func (h *ProxyHealth) SyncedFamily(f string, started time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.state[f]
	if s == nil {
		return
	}
	s.lastSync = h.now()
	if !s.oldestQueue.IsZero() && !s.oldestQueue.After(started) {
		s.oldestQueue = time.Time{}
	}
}

// Healthy reports the state and the times behind it: healthy only when
// every family is; lastSync is the oldest of the families' last syncs and
// oldestQueued the oldest change still waiting in any.
func (h *ProxyHealth) Healthy() (ok bool, lastSync, oldestQueued time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok = true
	for i, f := range h.families {
		s := h.state[f]
		if !h.healthyLocked(s) {
			ok = false
		}
		if i == 0 || s.lastSync.Before(lastSync) {
			lastSync = s.lastSync
		}
		if !s.oldestQueue.IsZero() && (oldestQueued.IsZero() || s.oldestQueue.Before(oldestQueued)) {
			oldestQueued = s.oldestQueue
		}
	}
	return ok, lastSync, oldestQueued
}

func (h *ProxyHealth) healthyLocked(s *familyHealth) bool {
	return s.oldestQueue.IsZero() || h.now().Sub(s.oldestQueue) < h.Timeout
}

// familyReport is one family's part of the /healthz document.
type familyReport struct {
	Healthy             bool       `json:"healthy"`
	LastUpdated         time.Time  `json:"lastUpdated"`
	OldestPendingChange *time.Time `json:"oldestPendingChange,omitempty"`
}

// ServeHTTP answers /healthz and /livez as kube-proxy does: 200 or 503
// with a small JSON document; a dual-stack proxy adds each family's
// state under "families".
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
	if len(h.families) > 1 {
		fams := map[string]familyReport{}
		h.mu.Lock()
		for _, f := range h.families {
			s := h.state[f]
			r := familyReport{Healthy: h.healthyLocked(s), LastUpdated: s.lastSync}
			if !s.oldestQueue.IsZero() {
				q := s.oldestQueue
				r.OldestPendingChange = &q
			}
			fams[f] = r
		}
		h.mu.Unlock()
		body["families"] = fams
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
