package load

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func ms(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{name: "no samples", sorted: nil, p: 50, want: 0},
		{name: "one sample p50", sorted: ms(7), p: 50, want: 7 * time.Millisecond},
		{name: "one sample p99", sorted: ms(7), p: 99, want: 7 * time.Millisecond},
		{name: "even count p50 takes lower middle", sorted: ms(1, 2, 3, 4), p: 50, want: 2 * time.Millisecond},
		{name: "odd count p50 takes middle", sorted: ms(1, 2, 3, 4, 5), p: 50, want: 3 * time.Millisecond},
		{name: "hundred p99", sorted: ms(hundred...), p: 99, want: 99 * time.Millisecond},
		{name: "hundred p50", sorted: ms(hundred...), p: 50, want: 50 * time.Millisecond},
		{name: "p100 is max", sorted: ms(1, 5, 9), p: 100, want: 9 * time.Millisecond},
		{name: "p0 is min", sorted: ms(1, 5, 9), p: 0, want: 1 * time.Millisecond},
		{name: "ten samples p99 is max", sorted: ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), p: 99, want: 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		clients [][]time.Duration
		fails   []error
		elapsed time.Duration
		want    Summary
	}{
		{
			name:    "empty phase",
			elapsed: time.Second,
			want:    Summary{Elapsed: time.Second},
		},
		{
			name:    "merged clients, unsorted input",
			clients: [][]time.Duration{ms(30, 10), ms(20, 40)},
			elapsed: 2 * time.Second,
			want: Summary{
				Ops: 4, Elapsed: 2 * time.Second, Throughput: 2,
				P50: 20 * time.Millisecond, P99: 40 * time.Millisecond, Max: 40 * time.Millisecond,
			},
		},
		{
			name:    "errors counted apart from throughput, texts deduplicated and capped",
			clients: [][]time.Duration{ms(5)},
			fails:   []error{errors.New("a"), errors.New("a"), errors.New("b"), errors.New("c"), errors.New("d")},
			elapsed: 500 * time.Millisecond,
			want: Summary{
				Ops: 1, Errors: 5, Elapsed: 500 * time.Millisecond, Throughput: 2,
				P50: 5 * time.Millisecond, P99: 5 * time.Millisecond, Max: 5 * time.Millisecond,
				ErrorTexts: []string{"a", "b", "c"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var total Samples
			for i, lat := range tt.clients {
				var s Samples
				for _, d := range lat {
					s.Observe(d)
				}
				if i == 0 {
					for _, err := range tt.fails {
						s.Fail(err)
					}
				}
				total.Merge(&s)
			}
			if len(tt.clients) == 0 {
				for _, err := range tt.fails {
					total.Fail(err)
				}
			}
			got := total.Summarize(tt.elapsed)
			if got.Ops != tt.want.Ops || got.Errors != tt.want.Errors || got.Elapsed != tt.want.Elapsed ||
				got.Throughput != tt.want.Throughput || got.P50 != tt.want.P50 || got.P99 != tt.want.P99 ||
				got.Max != tt.want.Max || !slices.Equal(got.ErrorTexts, tt.want.ErrorTexts) {
				t.Fatalf("Summarize() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSharedSamplesMergeConcurrently(t *testing.T) {
	var shared sharedSamples
	done := make(chan struct{})
	for range 8 {
		go func() {
			var s Samples
			for range 100 {
				s.Observe(time.Millisecond)
			}
			shared.merge(&s)
			done <- struct{}{}
		}()
	}
	for range 8 {
		<-done
	}
	if got := shared.s.Summarize(time.Second).Ops; got != 800 {
		t.Fatalf("merged %d samples, want 800", got)
	}
}
