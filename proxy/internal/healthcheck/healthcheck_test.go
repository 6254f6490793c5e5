package healthcheck

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/componentbase/freeport"
)

func TestProxyHealth(t *testing.T) {
	now := time.Unix(1000, 0)
	h := NewProxyHealth(time.Minute)
	h.now = func() time.Time { return now }
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"nothing queued", func() {}, 200},
		{"change queued, within timeout", func() { h.Queued(); now = now.Add(30 * time.Second) }, 200},
		{"change waited past timeout", func() { now = now.Add(time.Minute) }, 503},
		{"a sync started before the change does not clear it", func() { h.Synced(now.Add(-2 * time.Minute)) }, 503},
		{"a sync started after clears it", func() { h.Synced(now) }, 200},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != st.want {
				t.Errorf("status %d, want %d: %s", rec.Code, st.want, rec.Body)
			}
		})
	}
}

func TestServices(t *testing.T) {
	s := &Services{Host: "127.0.0.1"}
	defer s.Close()
	port := int32(freeport.For(t))
	get := func() (int, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	name := types.NamespacedName{Namespace: "ns", Name: "lb"}
	for _, tt := range []struct {
		name  string
		local int
		want  int
	}{{"local endpoints", 2, 200}, {"no local endpoint", 0, 503}} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Sync(map[int32]Service{port: {Name: name, LocalEndpoints: tt.local}}); err != nil {
				t.Fatal(err)
			}
			code, body := get()
			if code != tt.want || !strings.Contains(body, fmt.Sprintf(`"localEndpoints":%d`, tt.local)) {
				t.Errorf("got %d %s", code, body)
			}
		})
	}
	t.Run("removed port stops answering", func(t *testing.T) {
		if err := s.Sync(nil); err != nil {
			t.Fatal(err)
		}
		if code, _ := get(); code != 0 {
			t.Errorf("still answering with %d", code)
		}
	})
}

func TestProxyHealthDualStack(t *testing.T) {
	now := time.Unix(1000, 0)
	h := NewProxyHealth(time.Minute, "IPv4", "IPv6")
	h.now = func() time.Time { return now }
	steps := []struct {
		name     string
		do       func()
		want     int
		wantBody string
	}{
		{"nothing queued", func() {}, 200, `"IPv6":{"healthy":true`},
		{"change queued, IPv4 syncs, IPv6 fails past the timeout", func() {
			h.Queued()
			h.SyncedFamily("IPv4", now)
			now = now.Add(2 * time.Minute)
		}, 503, `"IPv6":{"healthy":false`},
		{"IPv4 is reported healthy meanwhile", func() {}, 503, `"IPv4":{"healthy":true`},
		{"IPv6 syncs", func() { h.SyncedFamily("IPv6", now) }, 200, `"healthy":true`},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != st.want {
				t.Errorf("status %d, want %d: %s", rec.Code, st.want, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), st.wantBody) {
				t.Errorf("body %s lacks %s", rec.Body, st.wantBody)
			}
		})
	}
}
