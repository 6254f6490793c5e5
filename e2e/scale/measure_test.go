package scale

import (
	"math"
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestBucketQuantile(t *testing.T) {
	buckets := map[float64]uint64{0.1: 50, 0.5: 90, 1: 100, math.Inf(1): 100}
	for _, tc := range []struct {
		name string
		q    float64
		want time.Duration
	}{
		{"median in the first bucket", 0.5, 100 * time.Millisecond},
		{"p99 interpolated in the last finite bucket", 0.99, 950 * time.Millisecond},
		{"p70 halfway through the second bucket", 0.7, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := bucketQuantile(tc.q, 100, buckets)
			if d := got - tc.want; d > time.Millisecond || d < -time.Millisecond {
				t.Errorf("bucketQuantile(%v) = %s, want %s", tc.q, got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, path               string
		verb, resource, scope, slo string
	}{
		{"GET", "/api/v1/pods", "LIST", "pods", "cluster", "cluster list ≤30s"},
		{"GET", "/api/v1/pods?watch=true", "WATCH", "pods", "cluster", ""},
		{"GET", "/api/v1/namespaces/a/pods", "LIST", "pods", "namespace", "namespace list ≤5s"},
		{"GET", "/api/v1/namespaces/a", "GET", "namespaces", "resource", "read object ≤1s"},
		{"POST", "/apis/apps/v1/namespaces/a/deployments", "POST", "deployments", "namespace", "mutating ≤1s"},
		{"PATCH", "/api/v1/nodes/n1", "PATCH", "nodes", "resource", "mutating ≤1s"},
		{"PUT", "/api/v1/namespaces/a/pods/p/status", "PUT", "pods/status", "resource", "mutating ≤1s"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			u, err := url.Parse("https://x" + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			verb, resource, scope := classify(&http.Request{Method: tc.method, URL: u})
			if verb != tc.verb || resource != tc.resource || scope != tc.scope {
				t.Errorf("classify = %s %s %s, want %s %s %s", verb, resource, scope, tc.verb, tc.resource, tc.scope)
			}
			slo, _ := sloFor(verb, scope)
			if slo.Name != tc.slo {
				t.Errorf("SLO = %q, want %q", slo.Name, tc.slo)
			}
		})
	}
}
