package cluster

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testwait"
)

// slowly waits on conditions that run kubectl or a command in a pod: once
// a second, so that polling does not load the cluster under test.
var slowly = testwait.Poll{Interval: time.Second}

// nodeImages are the trireme.dev/<name> images `make images` built, as the
// node reports them, in the order of names.
func nodeImages(t testing.TB, names ...string) []any {
	t.Helper()
	images, err := kubectl("get", "node", nodeName, "-o", "jsonpath={.status.images[*].names[*]}")
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Fields(images)
	var refs []any
	for _, name := range names {
		i := slices.IndexFunc(all, func(n string) bool { return strings.HasPrefix(n, "trireme.dev/"+name+":") })
		if i < 0 {
			t.Fatalf("no trireme.dev/%s image on the node: %s", name, images)
		}
		refs = append(refs, all[i])
	}
	return refs
}

// apply applies a manifest (a format string whose %[1]s is the busybox image
// and %[2]s the echo image).
func apply(t testing.TB, manifest string) {
	t.Helper()
	if out, err := kubectlStdin(fmt.Sprintf(manifest, nodeImages(t, "busybox", "echo")...), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// applyVerbatim applies a manifest as written: one with no images in it,
// which apply's formatting would mangle.
func applyVerbatim(t testing.TB, manifest string) {
	t.Helper()
	if out, err := kubectlStdin(manifest, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// must runs kubectl and fails the test on error, printing the cluster's pods
// and then the error: the last lines of a long log are the ones CI shows.
func must(t testing.TB, args ...string) string {
	t.Helper()
	start := time.Now()
	out, err := kubectl(args...)
	if err != nil {
		state, _ := kubectl("get", "pods", "-A", "-o", "wide")
		t.Fatalf("%s\nafter %s: %v", state, time.Since(start).Round(time.Millisecond), err)
	}
	return out
}

// execIn runs a shell command in a pod's container.
func execIn(ns, pod, script string) (string, error) {
	return kubectl("-n", ns, "exec", pod, "--", "sh", "-c", script)
}

// httpGet asks addr (host:port) for / from inside pod with nc (Debian's
// busybox-static wget segfaults on any URL) and returns the body.
func httpGet(ns, pod, host, port string) (string, error) {
	out, err := execIn(ns, pod, fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 3 %s %s`, host, port))
	if err != nil {
		return "", err
	}
	_, body, ok := strings.Cut(out, "\r\n\r\n")
	if !ok {
		return "", fmt.Errorf("no HTTP response from %s:%s: %q", host, port, out)
	}
	return body, nil
}

// readyEndpoints lists the ready endpoint addresses of a Service, from its
// EndpointSlices.
func readyEndpoints(ns, service string) ([]string, error) {
	out, err := kubectl("-n", ns, "get", "endpointslices", "-l", "kubernetes.io/service-name="+service, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Endpoints []struct {
				Addresses  []string `json:"addresses"`
				Conditions struct {
					Ready *bool `json:"ready"`
				} `json:"conditions"`
			} `json:"endpoints"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	var ips []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ips = append(ips, e.Addresses...)
			}
		}
	}
	return ips, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
