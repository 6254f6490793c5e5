package server

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

func TestAttributes(t *testing.T) {
	tests := []struct {
		method, path, verb, sub string
	}{
		{"GET", "/pods", "get", "proxy"},
		{"POST", "/exec/ns/p/c", "create", "proxy"},
		{"GET", "/containerLogs/ns/p/c", "get", "proxy"},
		{"GET", "/metrics", "get", "metrics"},
		{"GET", "/metrics/resource", "get", "metrics"},
		{"GET", "/stats/summary", "get", "stats"},
		{"GET", "/logs/", "get", "log"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			a := Attributes(&user.DefaultInfo{Name: "u"}, httptest.NewRequest(tc.method, tc.path, nil), "node-1")
			if a.Verb != tc.verb || a.Subresource != tc.sub || a.Resource != "nodes" || a.Name != "node-1" {
				t.Errorf("got verb %s resource %s/%s name %s", a.Verb, a.Resource, a.Subresource, a.Name)
			}
		})
	}
}

func TestLogOptions(t *testing.T) {
	q := url.Values{"follow": {"true"}, "tailLines": {"5"}, "timestamps": {"1"}, "limitBytes": {"100"}}
	o, err := logOptions(q)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Follow || !o.Timestamp || *o.TailLines != 5 || *o.LimitBytes != 100 {
		t.Errorf("options %+v", o)
	}
	if _, err := logOptions(url.Values{"tailLines": {"many"}}); err == nil {
		t.Error("bad tailLines accepted")
	}
}

func TestStreamOptions(t *testing.T) {
	in, out, errOut, tty := streamOptions(url.Values{"input": {"1"}, "output": {"1"}, "tty": {"true"}})
	if !in || !out || errOut || !tty {
		t.Errorf("got %v %v %v %v", in, out, errOut, tty)
	}
}
