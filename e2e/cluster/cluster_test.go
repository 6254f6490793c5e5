package cluster

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIdleRSS reports the resident memory of each control-plane component with
// the cluster empty (before the workload tests).
func TestIdleRSS(t *testing.T) {
	time.Sleep(5 * time.Second)
	total := 0
	for _, bin := range []string{"etcd", "trireme-apiserver", "trireme-controller-manager", "trireme-scheduler"} {
		found := false
		for _, p := range procs() {
			fields := strings.Fields(p.cmdline)
			if len(fields) > 0 && filepath.Base(fields[0]) == bin && strings.Contains(p.cmdline, suite.root) {
				fmt.Printf("e2e/cluster: idle RSS %-28s %6.1f MiB\n", bin, float64(p.rssKiB)/1024)
				total += p.rssKiB
				found = true
			}
		}
		if !found {
			t.Errorf("no %s process of this cluster", bin)
		}
	}
	fmt.Printf("e2e/cluster: idle RSS control plane total        %6.1f MiB\n", float64(total)/1024)
}

const workload = `apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: demo}
data: {index.html: "hello from trireme\n"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: %[1]s
        command: ["sh", "-c", "echo serving; exec httpd -f -v -p 8080 -h /www"]
        ports: [{containerPort: 8080}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
        volumeMounts: [{name: www, mountPath: /www}]
      volumes: [{name: www, configMap: {name: web}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: demo}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: demo}
spec:
  containers:
  - name: client
    image: %[1]s
    command: ["sleep", "3600"]
`

// TestWorkload: a 3-replica Deployment becomes Available, its ClusterIP Service
// answers from a pod, and kubectl logs and exec work.
func TestWorkload(t *testing.T) {
	images, err := kubectl("get", "node", nodeName, "-o", "jsonpath={.status.images[*].names[*]}")
	if err != nil {
		t.Fatal(err)
	}
	busybox := ""
	for _, n := range strings.Fields(images) {
		if strings.HasPrefix(n, "trireme.dev/busybox:") {
			busybox = n
		}
	}
	if busybox == "" {
		t.Fatalf("no trireme.dev/busybox image on the node: %s", images)
	}
	if out, err := kubectlStdin(fmt.Sprintf(workload, busybox), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := kubectl("-n", "demo", "rollout", "status", "deployment/web", "--timeout=90s"); err != nil {
		out, _ := kubectl("-n", "demo", "get", "deploy,rs,pods", "-o", "wide")
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := kubectl("-n", "demo", "wait", "--for=condition=Available", "deployment/web", "--timeout=30s"); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectl("-n", "demo", "wait", "--for=condition=Ready", "pod/client", "--timeout=60s"); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectl("-n", "kube-system", "rollout", "status", "daemonset/kube-proxy", "--timeout=60s"); err != nil {
		t.Fatal(err)
	}
	ip, err := kubectl("-n", "demo", "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		t.Fatal(err)
	}
	// nc, not wget: Debian's busybox-static wget crashes (SIGSEGV) on any URL.
	var got string
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err = kubectl("-n", "demo", "exec", "client", "--", "sh", "-c", `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 `+ip+" 80")
		if err == nil && strings.HasSuffix(got, "\r\n\r\nhello from trireme\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service %s from a pod: %q, %v", ip, got, err)
		}
		time.Sleep(time.Second)
	}
	pod, err := kubectl("-n", "demo", "get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}")
	if err != nil {
		t.Fatal(err)
	}
	logs, err := kubectl("-n", "demo", "logs", pod)
	if err != nil || !strings.Contains(logs, "serving") {
		t.Errorf("kubectl logs %s: %q, %v", pod, logs, err)
	}
}

// TestDNS: CoreDNS answers a Service's name from a pod, through the resolver the
// kubelet configured (clusterDNS).
func TestDNS(t *testing.T) {
	if _, err := kubectl("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=90s"); err != nil {
		out, _ := kubectl("-n", "kube-system", "get", "pods", "-o", "wide")
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := kubectl("-n", "demo", "wait", "--for=condition=Ready", "pod/client", "--timeout=60s"); err != nil {
		t.Fatal(err)
	}
	want, err := kubectl("-n", "demo", "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err = kubectl("-n", "demo", "exec", "client", "--", "nslookup", "web.demo.svc.cluster.local")
		if err == nil && strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			logs, _ := kubectl("-n", "kube-system", "logs", "deployment/coredns", "--previous")
			t.Fatalf("nslookup web.demo.svc.cluster.local: want %s, got %q, %v\ncoredns (previous):\n%s", want, got, err, logs)
		}
		time.Sleep(time.Second)
	}
}
