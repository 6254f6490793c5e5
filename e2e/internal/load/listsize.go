package load

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ListMode is one way of asking for a full list.
type ListMode struct {
	Name            string
	ResourceVersion string // "" asks for a consistent read, "0" allows any cached state
}

// listModes are the two reads clients make: kubectl's consistent list and
// an informer's initial list from the cache.
var listModes = []ListMode{
	{Name: "consistent (resourceVersion unset)", ResourceVersion: ""},
	{Name: "cached (resourceVersion=0)", ResourceVersion: "0"},
}

// ListResult is the outcome of the large-list measurement.
type ListResult struct {
	Created Summary // pod creates that filled the list
	Modes   []ListModeResult
}

// ListModeResult holds the timed lists of one mode.
type ListModeResult struct {
	Mode  ListMode
	Items int // items in the last list
	Bytes int // size of the last JSON response
	Runs  []time.Duration
	Err   error // the first failed list, if any
}

// runListSize creates cfg.ListSize pods, then times full lists of exactly
// those pods. The timing covers the request and the transfer of the JSON
// body, not client-side decoding, so it measures the server.
func (r *runner) runListSize(ctx context.Context) (ListResult, error) {
	var res ListResult
	labels := map[string]string{runLabel: r.run, phaseLabel: "list"}
	var next atomic.Int64
	samples := make([]Samples, len(r.workers))
	var wg sync.WaitGroup
	start := time.Now()
	for i, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pods := w.kinds["pods"]
			for ctx.Err() == nil {
				n := next.Add(1)
				if n > int64(r.cfg.ListSize) {
					return
				}
				t := time.Now()
				if _, err := pods.create(ctx, fmt.Sprintf("list-%d", n), labels); err != nil {
					samples[i].Fail(fmt.Errorf("create pod for list: %w", err))
					continue
				}
				samples[i].Observe(time.Since(t))
			}
		}()
	}
	wg.Wait()
	var total Samples
	for i := range samples {
		total.Merge(&samples[i])
	}
	res.Created = total.Summarize(time.Since(start))
	if err := ctx.Err(); err != nil {
		return res, err
	}

	selector := fmt.Sprintf("%s=%s,%s=list", runLabel, r.run, phaseLabel)
	rc := r.workers[0].cs.CoreV1().RESTClient()
	for _, mode := range listModes {
		mr := ListModeResult{Mode: mode}
		for range r.cfg.ListRuns {
			req := rc.Get().Namespace(r.ns).Resource("pods").
				Param("labelSelector", selector).
				SetHeader("Accept", "application/json")
			if mode.ResourceVersion != "" {
				req = req.Param("resourceVersion", mode.ResourceVersion)
			}
			t := time.Now()
			body, err := req.DoRaw(ctx)
			d := time.Since(t)
			if err != nil {
				mr.Err = fmt.Errorf("list pods: %w", err)
				break
			}
			mr.Runs = append(mr.Runs, d)
			mr.Bytes = len(body)
			var list struct {
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(body, &list); err != nil {
				mr.Err = fmt.Errorf("decode pod list: %w", err)
				break
			}
			mr.Items = len(list.Items)
		}
		res.Modes = append(res.Modes, mr)
	}
	return res, ctx.Err()
}
