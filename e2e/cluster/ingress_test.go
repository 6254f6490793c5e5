package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testpki"
)

// ingressDemo is two echo Deployments behind the Services alpha and beta
// (%[2]s: the echo image), an Ingress of the default class (no
// ingressClassName) with two hosts, Prefix and Exact paths, and one
// terminating TLS for secure.test with the Secret secure-tls.
const ingressDemo = `apiVersion: v1
kind: Namespace
metadata: {name: ingress-demo}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: alpha, namespace: ingress-demo}
spec:
  selector: {matchLabels: {app: alpha}}
  template:
    metadata: {labels: {app: alpha}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: %[2]s
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports: [{containerPort: 8080}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: beta, namespace: ingress-demo}
spec:
  selector: {matchLabels: {app: beta}}
  template:
    metadata: {labels: {app: beta}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: %[2]s
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports: [{containerPort: 8080}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: alpha, namespace: ingress-demo}
spec:
  selector: {app: alpha}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: beta, namespace: ingress-demo}
spec:
  selector: {app: beta}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: two-hosts, namespace: ingress-demo}
spec:
  rules:
  - host: alpha.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /hostname, pathType: Exact, backend: {service: {name: beta, port: {name: http}}}}
  - host: beta.test
    http:
      paths:
      - {path: /echo, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: secure, namespace: ingress-demo}
spec:
  tls:
  - hosts: [secure.test]
    secretName: secure-tls
  rules:
  - host: secure.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
`

// gatewayDemo is a Gateway of the GatewayClass traefik listening for HTTP on
// port 80 (Traefik's web entry point) and an HTTPRoute through it: /echo to
// beta, everything else to alpha.
const gatewayDemo = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: demo, namespace: ingress-demo}
spec:
  gatewayClassName: traefik
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.gw.test"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: demo, namespace: ingress-demo}
spec:
  parentRefs: [{name: demo}]
  hostnames: [route.gw.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /echo}}]
    backendRefs: [{name: beta, port: 80}]
  - backendRefs: [{name: alpha, port: 80}]
`

// TestIngress: the traefik addon routes Ingresses of the default
// IngressClass and Gateway API routes from the host, through the address
// the cloud-controller-manager gave its LoadBalancer Service, which each
// Ingress's status shows.
func TestIngress(t *testing.T) {
	begin(t)
	if class := must(t, "get", "ingressclass", "traefik", "-o",
		`jsonpath={.spec.controller} {.metadata.annotations.ingressclass\.kubernetes\.io/is-default-class}`); class != "traefik.io/ingress-controller true" {
		t.Fatalf("IngressClass traefik: controller and default %q, want traefik.io/ingress-controller true", class)
	}
	lb := lbAddress(t, "kube-system", "traefik")
	t.Cleanup(func() { _, _ = kubectl("delete", "namespace", "ingress-demo", "--wait=false") })

	ca, pair := serving("secure.test")
	apply(t, ingressDemo)
	certFile, keyFile, err := pair.Write(t.TempDir(), "tls")
	if err != nil {
		t.Fatal(err)
	}
	must(t, "-n", "ingress-demo", "create", "secret", "tls", "secure-tls", "--cert", certFile, "--key", keyFile)
	must(t, "-n", "ingress-demo", "rollout", "status", "deployment/alpha", "deployment/beta", "--timeout=120s")

	// The apiserver's DefaultIngressClass admission gives it the default class.
	if class := must(t, "-n", "ingress-demo", "get", "ingress", "two-hosts", "-o", "jsonpath={.spec.ingressClassName}"); class != "traefik" {
		t.Errorf("Ingress two-hosts: ingressClassName %q, want the default traefik", class)
	}
	slowly.ForNil(t, 60*time.Second, "Ingress two-hosts shows Traefik's address", func() error {
		out, err := kubectl("-n", "ingress-demo", "get", "ingress", "two-hosts", "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
		if err != nil {
			return err
		}
		if out != lb {
			return fmt.Errorf("status.loadBalancer.ingress %q, want %s", out, lb)
		}
		return nil
	})

	plain := viaAddress(lb, nil)
	for _, tc := range []struct {
		name, url  string
		wantStatus int
		// wantBody is the answer's prefix: the Deployment's pods are named after it.
		wantBody string
	}{
		{"Prefix / of alpha.test", "http://alpha.test/", 200, "alpha-"},
		{"Prefix / takes every path below it", "http://alpha.test/echo?msg=below", 200, "below"},
		{"Exact /hostname of alpha.test goes to beta", "http://alpha.test/hostname", 200, "beta-"},
		{"Exact matches only its path", "http://alpha.test/hostname/", 404, "404 page not found"},
		{"Prefix /echo of beta.test", "http://beta.test/echo?msg=hello", 200, "hello"},
		{"Prefix /echo matches whole segments", "http://beta.test/echoes", 404, ""},
		{"beta.test has no /", "http://beta.test/", 404, ""},
		{"an unknown host", "http://nowhere.test/", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slowly.ForNil(t, 30*time.Second, tc.url, func() error {
				return expect(plain, tc.url, tc.wantStatus, tc.wantBody)
			})
		})
	}

	t.Run("TLS from the Secret", func(t *testing.T) {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.CertPEM)
		secure := viaAddress(lb, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		slowly.ForNil(t, 30*time.Second, "https://secure.test/ with the Secret's certificate", func() error {
			return expect(secure, "https://secure.test/", 200, "alpha-")
		})
	})

	t.Run("a rotated Secret is served without a restart", func(t *testing.T) {
		newCA, newPair := serving("secure.test")
		secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: secure-tls, namespace: ingress-demo}\ntype: kubernetes.io/tls\ndata: {tls.crt: %s, tls.key: %s}\n",
			base64.StdEncoding.EncodeToString(newPair.CertPEM), base64.StdEncoding.EncodeToString(newPair.KeyPEM))
		if out, err := kubectlStdin(secret, "apply", "-f", "-"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(newCA.CertPEM)
		secure := viaAddress(lb, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		slowly.ForNil(t, 30*time.Second, "https://secure.test/ with the rotated certificate", func() error {
			return expect(secure, "https://secure.test/", 200, "alpha-")
		})
	})

	t.Run("HTTPRoute through a Gateway", func(t *testing.T) {
		slowly.ForNil(t, 60*time.Second, "GatewayClass traefik accepted", func() error {
			return condition("gatewayclass", "traefik", "", "Accepted")
		})
		if out, err := kubectlStdin(gatewayDemo, "apply", "-f", "-"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		slowly.ForNil(t, 60*time.Second, "Gateway demo programmed", func() error {
			return condition("gateway", "demo", "ingress-demo", "Programmed")
		})
		if addr := must(t, "-n", "ingress-demo", "get", "gateway", "demo", "-o", "jsonpath={.status.addresses[*].value}"); addr != lb {
			t.Errorf("Gateway demo: status.addresses %q, want %s", addr, lb)
		}
		slowly.ForNil(t, 60*time.Second, "HTTPRoute demo accepted", func() error {
			out, err := kubectl("-n", "ingress-demo", "get", "httproute", "demo", "-o",
				`jsonpath={.status.parents[0].conditions[?(@.type=="Accepted")].status} {.status.parents[0].conditions[?(@.type=="ResolvedRefs")].status}`)
			if err != nil {
				return err
			}
			if out != "True True" {
				return fmt.Errorf("Accepted and ResolvedRefs %q", out)
			}
			return nil
		})
		for url, want := range map[string]string{
			"http://route.gw.test/":             "alpha-",
			"http://route.gw.test/echo?msg=gw":  "gw",
			"http://other.gw.test/echo?msg=gw2": "",
		} {
			status := 200
			if want == "" {
				status = 404
			}
			slowly.ForNil(t, 30*time.Second, url, func() error { return expect(plain, url, status, want) })
		}
	})
}

// condition checks that a Gateway API object's status condition is True.
func condition(kind, name, ns, cond string) error {
	args := []string{"get", kind, name, "-o", `jsonpath={.status.conditions[?(@.type=="` + cond + `")].status}`}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	out, err := kubectl(args...)
	if err != nil {
		return err
	}
	if out != "True" {
		return fmt.Errorf("%s %s: condition %s is %q", kind, name, cond, out)
	}
	return nil
}

// viaAddress is a client that connects to addr (port 80, or 443 for https)
// whatever the URL's host, as curl --resolve does; the URL's host is the
// Host header and the TLS server name.
func viaAddress(addr string, tlsConfig *tls.Config) *http.Client {
	dialer := &net.Dialer{Timeout: 3 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   tlsConfig,
		DialContext: func(ctx context.Context, network, hostport string) (net.Conn, error) {
			_, port, err := net.SplitHostPort(hostport)
			if err != nil {
				return nil, err
			}
			return dialer.DialContext(ctx, network, net.JoinHostPort(addr, port))
		},
	}}
}

// expect asks url and checks the status and that the body starts with want.
func expect(c *http.Client, url string, status int, want string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	if resp.StatusCode != status || !strings.HasPrefix(string(body), want) {
		return fmt.Errorf("%s: %d %q, want %d %q...", url, resp.StatusCode, body, status, want)
	}
	return nil
}

// serving makes a CA of its own and a serving certificate it signed for
// host: a client that trusts only that CA accepts only that certificate.
func serving(host string) (*testpki.CA, *testpki.Pair) {
	ca := testpki.NewCA("e2e-ingress " + host)
	return ca, ca.Issue(testpki.Cert{CommonName: host, DNSNames: []string{host}, Usage: testpki.ServerAuth})
}
