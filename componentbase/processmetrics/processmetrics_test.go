package processmetrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestNewRegistry(t *testing.T) {
	extra := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_total", Help: "A test counter."})
	families, err := NewRegistry(extra).Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range families {
		got[f.GetName()] = true
	}
	for _, want := range []string{"go_goroutines", "process_resident_memory_bytes", "test_total"} {
		if !got[want] {
			t.Errorf("no %s among the registry's families", want)
		}
	}
}
