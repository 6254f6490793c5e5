package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const headless = `apiVersion: v1
kind: Service
metadata: {name: hl, namespace: demo}
spec:
  clusterIP: None
  selector: {app: hl}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Pod
metadata: {name: member, namespace: demo, labels: {app: hl}}
spec:
  terminationGracePeriodSeconds: 1
  hostname: member
  subdomain: hl
  containers:
  - name: main
    image: %[1]s
    command: ["sleep", "3600"]
`

// TestDNS: CoreDNS answers from pods, through the resolver the kubelet
// configured (clusterDNS and the search path): a Service's full name, its short
// name in the same namespace (through libc, which applies the search path;
// busybox's nslookup does not), a headless Service's name and its pod's own
// record, and the `kubernetes` Service by name, which also answers on its port.
func TestDNS(t *testing.T) {
	begin(t)
	if _, err := kubectl("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=90s"); err != nil {
		out, _ := kubectl("-n", "kube-system", "get", "pods", "-o", "wide")
		t.Fatalf("%v\n%s", err, out)
	}
	apply(t, headless)
	must(t, "-n", "demo", "wait", "--for=condition=Ready", "pod/client", "pod/member", "--timeout=60s")
	web := must(t, "-n", "demo", "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
	api := must(t, "-n", "default", "get", "service", "kubernetes", "-o", "jsonpath={.spec.clusterIP}")
	member := must(t, "-n", "demo", "get", "pod", "member", "-o", "jsonpath={.status.podIP}")
	for _, c := range []struct{ name, want string }{
		{"web.demo.svc.cluster.local", web},
		{"hl.demo.svc.cluster.local", member},
		{"member.hl.demo.svc.cluster.local", member},
		{"kubernetes.default.svc.cluster.local", api},
	} {
		slowly.ForNil(t, 90*time.Second, "nslookup "+c.name, func() error {
			got, err := execIn("demo", "client", "nslookup "+c.name)
			if err == nil && !strings.Contains(got, "Address: "+c.want) && !strings.Contains(got, "Address 1: "+c.want) {
				err = fmt.Errorf("want %s, got %q", c.want, got)
			}
			if err != nil {
				logs, _ := kubectl("-n", "kube-system", "logs", "deployment/coredns", "--tail=20")
				err = fmt.Errorf("%w\ncoredns:\n%s", err, logs)
			}
			return err
		})
	}
	// busybox's nslookup ignores the search path; nc resolves through libc,
	// which applies it.
	slowly.ForNil(t, 30*time.Second, "short name web", func() error {
		body, err := httpGet("demo", "client", "web", "80")
		if err == nil && body != "hello from trireme\n" {
			err = fmt.Errorf("body %q", body)
		}
		if err != nil {
			conf, _ := execIn("demo", "client", "cat /etc/resolv.conf")
			err = fmt.Errorf("%w (resolv.conf %q)", err, conf)
		}
		return err
	})
	slowly.ForNil(t, 30*time.Second, "kubernetes Service by name", func() error {
		for _, name := range []string{"kubernetes.default.svc.cluster.local", "kubernetes.default"} {
			if _, err := execIn("demo", "client", "nc -w 3 "+name+" 443 </dev/null"); err != nil {
				return err
			}
		}
		return nil
	})
}
