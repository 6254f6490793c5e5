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
	"net/netip"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testpki"
)

// echoNamespace is the Namespace ns with, for each of names, an echo
// Deployment and its Service (port 80, named http) of that name, for apply:
// %[2]s in it is the echo image, whose pods answer / with their names.
func echoNamespace(ns string, names ...string) string {
	out := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
	for _, name := range names {
		out += fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: %%[2]s
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports: [{containerPort: 8080}]
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  selector: {app: %[2]s}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, ns, name)
	}
	return out
}

// ingressDemo, applied after echoNamespace("ingress-demo", "alpha", "beta"),
// is an Ingress of the default class (no ingressClassName) with two hosts,
// Prefix and Exact paths to alpha and beta, and one terminating TLS for
// secure.test with the Secret secure-tls.
const ingressDemo = `---
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
      - {path: /host, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
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

// brokenIngress names a Service that does not exist, a port beta lacks and
// a TLS Secret that does not exist; its path / to alpha is sound.
const brokenIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: broken, namespace: ingress-demo}
spec:
  tls:
  - hosts: [broken.test]
    secretName: missing-tls
  rules:
  - host: broken.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /ghost, pathType: Prefix, backend: {service: {name: ghost, port: {number: 80}}}}
      - {path: /wrong-port, pathType: Prefix, backend: {service: {name: beta, port: {number: 8080}}}}
`

// claimingIngresses are Ingresses claiming the same host and path:
// longer.test/hostname Exact to alpha and Prefix to beta (Traefik's rules
// Path(...) and the longer PathPrefix(...)), and tie.test/ Prefix to both
// alpha and beta (one rule, twice).
const claimingIngresses = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: claim-exact, namespace: ingress-demo}
spec:
  rules:
  - host: longer.test
    http:
      paths:
      - {path: /hostname, pathType: Exact, backend: {service: {name: alpha, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: claim-prefix, namespace: ingress-demo}
spec:
  rules:
  - host: longer.test
    http:
      paths:
      - {path: /hostname, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: tie-alpha, namespace: ingress-demo}
spec:
  rules:
  - host: tie.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: tie-beta, namespace: ingress-demo}
spec:
  rules:
  - host: tie.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
`

// crossRoute is an HTTPRoute through the Gateway demo whose rule /hostname
// goes to the Service gamma of ingress-other; every other path to alpha.
const crossRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cross, namespace: ingress-demo}
spec:
  parentRefs: [{name: demo}]
  hostnames: [cross.gw.test]
  rules:
  - matches: [{path: {type: PathPrefix, value: /hostname}}]
    backendRefs: [{name: gamma, namespace: ingress-other, port: 80}]
  - backendRefs: [{name: alpha, port: 80}]
`

// grantToGamma lets HTTPRoutes of ingress-demo name the Service gamma.
const grantToGamma = `apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: routes-to-gamma, namespace: ingress-other}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ingress-demo}]
  to: [{group: "", kind: Service, name: gamma}]
`

// gatewayHTTPS is the Gateway demo with a second listener, HTTPS on port 443
// (Traefik's websecure entry point) for secure.gw.test, terminating TLS with
// the Secret gw-tls, and an HTTPRoute attached to that listener alone.
const gatewayHTTPS = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: demo, namespace: ingress-demo}
spec:
  gatewayClassName: traefik
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.gw.test"}
  - name: https
    protocol: HTTPS
    port: 443
    hostname: secure.gw.test
    tls: {mode: Terminate, certificateRefs: [{name: gw-tls}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: secure, namespace: ingress-demo}
spec:
  parentRefs: [{name: demo, sectionName: https}]
  hostnames: [secure.gw.test]
  rules:
  - backendRefs: [{name: beta, port: 80}]
`

// steadyDemo, for apply, is a Deployment steady of two echo pods built to be
// rolled without a failed request, as users build theirs: a readiness probe,
// and a preStop sleep that keeps a deleted pod serving while Traefik and the
// proxies learn it is going. The Ingress steady routes steady.test to it.
const steadyDemo = `apiVersion: apps/v1
kind: Deployment
metadata: {name: steady, namespace: ingress-demo}
spec:
  replicas: 2
  selector: {matchLabels: {app: steady}}
  template:
    metadata: {labels: {app: steady}}
    spec:
      terminationGracePeriodSeconds: 15
      containers:
      - name: web
        image: %[2]s
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
        lifecycle: {preStop: {sleep: {seconds: 5}}}
---
apiVersion: v1
kind: Service
metadata: {name: steady, namespace: ingress-demo}
spec:
  selector: {app: steady}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: steady, namespace: ingress-demo}
spec:
  rules:
  - host: steady.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: steady, port: {number: 80}}}}
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
	t.Cleanup(func() {
		_, _ = kubectl("delete", "namespace", "ingress-demo", "ingress-other", "--wait=false", "--ignore-not-found")
	})

	ca, pair := serving("secure.test")
	apply(t, echoNamespace("ingress-demo", "alpha", "beta")+ingressDemo)
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
	waitIngressAddress(t, "ingress-demo", "two-hosts", lb)

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
		// beta answers /hostname; Prefix /host must not take it to beta.
		{"Prefix /host matches whole segments", "http://beta.test/hostname", 404, "404 page not found"},
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
		applyVerbatim(t, secret)
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(newCA.CertPEM)
		secure := viaAddress(lb, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		slowly.ForNil(t, 30*time.Second, "https://secure.test/ with the rotated certificate", func() error {
			return expect(secure, "https://secure.test/", 200, "alpha-")
		})
		ca = newCA
	})

	t.Run("HTTPRoute through a Gateway", func(t *testing.T) {
		slowly.ForNil(t, 60*time.Second, "GatewayClass traefik accepted", func() error {
			return condition("gatewayclass", "traefik", "", "Accepted")
		})
		applyVerbatim(t, gatewayDemo)
		slowly.ForNil(t, 60*time.Second, "Gateway demo programmed", func() error {
			return condition("gateway", "demo", "ingress-demo", "Programmed")
		})
		if addr := must(t, "-n", "ingress-demo", "get", "gateway", "demo", "-o", "jsonpath={.status.addresses[*].value}"); addr != lb {
			t.Errorf("Gateway demo: status.addresses %q, want %s", addr, lb)
		}
		slowly.ForNil(t, 60*time.Second, "HTTPRoute demo accepted", func() error {
			return routeConditions("demo", "True True ResolvedRefs")
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

	t.Run("an Ingress naming a missing Service, port or TLS Secret", func(t *testing.T) {
		applyVerbatim(t, brokenIngress)
		// Traefik only logs these; the controller-manager's
		// ingress-references controller records them on the Ingress.
		for _, want := range []string{
			`ServiceNotFound .* Service "ghost" not found in namespace ingress-demo \(backend of broken.test/ghost\)`,
			`ServicePortNotFound .* Service "beta" has no port 8080 \(backend of broken.test/wrong-port\)`,
			`SecretNotFound .* Secret "missing-tls" not found in namespace ingress-demo \(TLS of broken.test\)`,
		} {
			re := regexp.MustCompile(`Warning\s+` + want)
			slowly.ForNil(t, 60*time.Second, "kubectl describe ingress broken: "+want, func() error {
				out, err := kubectl("-n", "ingress-demo", "describe", "ingress", "broken")
				if err != nil {
					return err
				}
				if !re.MatchString(out) {
					return fmt.Errorf("no event %q in\n%s", re, out)
				}
				return nil
			})
		}
		for url, want := range map[string]string{
			"http://broken.test/echo?msg=sound": "sound",
			"http://alpha.test/":                "alpha-",
			"http://beta.test/echo?msg=other":   "other",
			"http://route.gw.test/":             "alpha-",
		} {
			slowly.ForNil(t, 30*time.Second, url+" still served", func() error { return expect(plain, url, 200, want) })
		}
	})

	t.Run("Ingresses claiming the same host and path: Traefik's router priority", func(t *testing.T) {
		// Traefik orders its routers by priority, by default the length of
		// the rule it makes of the host and path; the Ingress API's
		// preference of Exact over Prefix does not enter into it.
		applyVerbatim(t, claimingIngresses)
		slowly.ForNil(t, 30*time.Second, "the Prefix path's longer rule wins over the Exact one", func() error {
			return expect(plain, "http://longer.test/hostname", 200, "beta-")
		})
		// One rule, twice: equal priorities, and Traefik documents no order
		// between them; either backend may answer, never neither.
		slowly.ForNil(t, 30*time.Second, "tie.test answered by alpha or beta", func() error {
			if err := expect(plain, "http://tie.test/", 200, "alpha-"); err != nil {
				return expect(plain, "http://tie.test/", 200, "beta-")
			}
			return nil
		})
		// The annotation router.priority decides: the higher wins.
		for _, step := range []struct{ ingress, priority, want string }{
			{"tie-beta", "100", "beta-"},
			{"tie-alpha", "200", "alpha-"},
		} {
			must(t, "-n", "ingress-demo", "annotate", "--overwrite", "ingress", step.ingress,
				"traefik.ingress.kubernetes.io/router.priority="+step.priority)
			slowly.ForNil(t, 30*time.Second, step.ingress+" with priority "+step.priority+" wins", func() error {
				return expect(plain, "http://tie.test/", 200, step.want)
			})
			// Settled: one configuration, so every request agrees.
			for range 10 {
				if err := expect(plain, "http://tie.test/", 200, step.want); err != nil {
					t.Fatal(err)
				}
			}
		}
	})

	t.Run("an HTTPRoute naming a Service of another namespace needs a ReferenceGrant", func(t *testing.T) {
		apply(t, echoNamespace("ingress-other", "gamma"))
		must(t, "-n", "ingress-other", "rollout", "status", "deployment/gamma", "--timeout=120s")
		applyVerbatim(t, crossRoute)
		slowly.ForNil(t, 60*time.Second, "HTTPRoute cross accepted, its reference refused", func() error {
			return routeConditions("cross", "True False RefNotPermitted")
		})
		// The refused backend answers 500, as the spec has it; the route's
		// other rule and the other routes serve.
		for url, want := range map[string]struct {
			status int
			body   string
		}{
			"http://cross.gw.test/hostname":       {500, ""},
			"http://cross.gw.test/echo?msg=cross": {200, "cross"},
			"http://route.gw.test/echo?msg=route": {200, "route"},
		} {
			slowly.ForNil(t, 30*time.Second, url, func() error { return expect(plain, url, want.status, want.body) })
		}
		applyVerbatim(t, grantToGamma)
		slowly.ForNil(t, 60*time.Second, "HTTPRoute cross's reference resolved", func() error {
			return routeConditions("cross", "True True ResolvedRefs")
		})
		slowly.ForNil(t, 30*time.Second, "gamma through the grant", func() error {
			return expect(plain, "http://cross.gw.test/hostname", 200, "gamma-")
		})
	})

	t.Run("a Gateway's HTTPS listener terminates TLS with its Secret", func(t *testing.T) {
		gwCA, gwPair := serving("secure.gw.test")
		certFile, keyFile, err := gwPair.Write(t.TempDir(), "gw")
		if err != nil {
			t.Fatal(err)
		}
		must(t, "-n", "ingress-demo", "create", "secret", "tls", "gw-tls", "--cert", certFile, "--key", keyFile)
		applyVerbatim(t, gatewayHTTPS)
		slowly.ForNil(t, 60*time.Second, "listener https programmed, its certificate resolved", func() error {
			out, err := kubectl("-n", "ingress-demo", "get", "gateway", "demo", "-o",
				`jsonpath={.status.listeners[?(@.name=="https")].conditions[?(@.type=="Programmed")].status} `+
					`{.status.listeners[?(@.name=="https")].conditions[?(@.type=="ResolvedRefs")].status} `+
					`{.status.listeners[?(@.name=="https")].attachedRoutes}`)
			if err != nil {
				return err
			}
			if out != "True True 1" {
				return fmt.Errorf("listener https: Programmed, ResolvedRefs and attachedRoutes %q, want \"True True 1\"", out)
			}
			return nil
		})
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(gwCA.CertPEM)
		secure := viaAddress(lb, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		slowly.ForNil(t, 30*time.Second, "https://secure.gw.test/ with the listener's certificate", func() error {
			return expect(secure, "https://secure.gw.test/hostname", 200, "beta-")
		})
		// The route is attached to the HTTPS listener only.
		slowly.ForNil(t, 30*time.Second, "http://secure.gw.test/ not routed", func() error {
			return expect(plain, "http://secure.gw.test/hostname", 404, "")
		})
	})

	t.Run("host ports 80 and 443 on the node, for clusters without LoadBalancer addresses", func(t *testing.T) {
		t.Cleanup(func() {
			upgradeAddons(t, `traefik.hostPorts=false`)
			_, _ = kubectl("-n", releaseNS, "rollout", "status", "deployment/traefik", "--timeout=120s")
		})
		// One node: the old pod frees the ports before the new one starts.
		upgradeAddons(t, `traefik.hostPorts=true`)
		must(t, "-n", releaseNS, "rollout", "status", "deployment/traefik", "--timeout=120s")
		node := must(t, "get", "node", nodeName, "-o", `jsonpath={.status.addresses[?(@.type=="InternalIP")].address}`)
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.CertPEM)
		for url, c := range map[string]*http.Client{
			"http://alpha.test/":   viaAddress(node, nil),
			"https://secure.test/": viaAddress(node, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		} {
			slowly.ForNil(t, 60*time.Second, url+" at the node's address "+node, func() error { return expect(c, url, 200, "alpha-") })
		}
	})

	t.Run("with externalTrafficPolicy Local the backend sees the client's address", func(t *testing.T) {
		// A client machine on the nodes' network, outside the cluster.
		client := netip.MustParseAddr(clientIP)
		_ = exec.Command("ip", "netns", "delete", clientNetns).Run()
		if err := suiteSwitch.Attach(clientNetns, "trclclip", client); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", clientNetns).Run() })
		// What Traefik saw as the client, through the Service's address.
		forwardedFor := func() (string, error) {
			out, err := exec.Command("ip", "netns", "exec", clientNetns, "curl", "-sS", "--max-time", "3",
				"-H", "Host: alpha.test", "http://"+lb+"/header?key=X-Forwarded-For").CombinedOutput()
			if err != nil {
				return "", fmt.Errorf("curl from %s: %w: %s", clientIP, err, out)
			}
			return strings.TrimSpace(string(out)), nil
		}
		// Cluster (the default) forwards from any node, masqueraded.
		slowly.ForNil(t, 30*time.Second, "Traefik sees the node, not the client, with Cluster", func() error {
			got, err := forwardedFor()
			if err == nil && (got == "" || got == clientIP) {
				err = fmt.Errorf("X-Forwarded-For %q, want a node's address", got)
			}
			return err
		})
		t.Cleanup(func() { upgradeAddons(t, `traefik.service.externalTrafficPolicy="Cluster"`) })
		upgradeAddons(t, `traefik.service.externalTrafficPolicy="Local"`)
		slowly.ForNil(t, 30*time.Second, "Traefik sees the client's address with Local", func() error {
			got, err := forwardedFor()
			if err == nil && got != clientIP {
				err = fmt.Errorf("X-Forwarded-For %q, want the client's %s", got, clientIP)
			}
			return err
		})
	})

	t.Run("no request fails while a backend rolls or Traefik is upgraded", func(t *testing.T) {
		apply(t, steadyDemo)
		must(t, "-n", "ingress-demo", "rollout", "status", "deployment/steady", "--timeout=120s")
		const url = "http://steady.test/hostname"
		slowly.ForNil(t, 30*time.Second, url, func() error { return expect(plain, url, 200, "steady-") })

		under := func(what string, change func()) {
			// A new connection each request, 100 a second. In a tight
			// loop (500 a second here) one client goes through all its
			// 28,000 ports within the 120 s conntrack remembers a closed
			// connection, and about one SYN in 40,000 went unanswered
			// even while no pod on its path changed: port reuse against
			// conntrack, which this test is not about.
			l := startLoad(plain, url, "steady-", 4, 40*time.Millisecond)
			change()
			// The last pods replaced drain after the rollout reports done.
			time.Sleep(20 * time.Second)
			r := l.stop()
			t.Logf("%s: %d requests answered, %d failed", what, r.Ops, r.Errors)
			if r.Errors > 0 {
				t.Errorf("%s: %d of %d requests failed: %s", what, r.Errors, r.Ops+r.Errors, strings.Join(r.ErrorTexts, "; "))
			}
			if r.Ops == 0 {
				t.Errorf("%s: no request answered", what)
			}
		}
		under("kubectl rollout restart deployment/steady", func() {
			must(t, "-n", "ingress-demo", "rollout", "restart", "deployment/steady")
			must(t, "-n", "ingress-demo", "rollout", "status", "deployment/steady", "--timeout=120s")
		})
		// A changed value rolls Traefik's pods: the new one starts, the
		// old one keeps accepting while the proxies drop it, then drains.
		t.Cleanup(func() {
			upgradeAddons(t, `traefik.drainTimeout="10s"`)
			_, _ = kubectl("-n", releaseNS, "rollout", "status", "deployment/traefik", "--timeout=120s")
		})
		under("helm upgrade of Traefik", func() {
			upgradeAddons(t, `traefik.drainTimeout="11s"`)
			must(t, "-n", releaseNS, "rollout", "status", "deployment/traefik", "--timeout=120s")
		})
	})
}

// routeConditions checks an HTTPRoute of ingress-demo's conditions for its
// first parent: "<Accepted> <ResolvedRefs> <ResolvedRefs' reason>".
func routeConditions(name, want string) error {
	out, err := kubectl("-n", "ingress-demo", "get", "httproute", name, "-o",
		`jsonpath={.status.parents[0].conditions[?(@.type=="Accepted")].status} `+
			`{.status.parents[0].conditions[?(@.type=="ResolvedRefs")].status} `+
			`{.status.parents[0].conditions[?(@.type=="ResolvedRefs")].reason}`)
	if err != nil {
		return err
	}
	if out != want {
		return fmt.Errorf("HTTPRoute %s: Accepted, ResolvedRefs and its reason %q, want %q", name, out, want)
	}
	return nil
}

// waitIngressAddress waits until the Ingress ns/name shows addr, Traefik's
// address, in its status (kubectl get ingress's ADDRESS).
func waitIngressAddress(t testing.TB, ns, name, addr string) {
	t.Helper()
	slowly.ForNil(t, 60*time.Second, "Ingress "+name+" shows Traefik's address", func() error {
		out, err := kubectl("-n", ns, "get", "ingress", name, "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}")
		if err != nil {
			return err
		}
		if out != addr {
			return fmt.Errorf("status.loadBalancer.ingress %q, want %s", out, addr)
		}
		return nil
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
	return clientVia(addr, tlsConfig, 0)
}

// clientVia is viaAddress's client keeping up to conns connections open
// between requests (HTTP keep-alive), or none when conns is 0: each request
// then opens its own, through the proxies' rules afresh.
func clientVia(addr string, tlsConfig *tls.Config, conns int) *http.Client {
	dialer := &net.Dialer{Timeout: 3 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives:   conns == 0,
		MaxIdleConnsPerHost: conns,
		TLSClientConfig:     tlsConfig,
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

// The client machine of the externalTrafficPolicy test: a network namespace
// on the suite's switch, outside the node range and the LoadBalancer pool.
const (
	clientNetns = "trclcli"
	clientIP    = "10.213.7.200"
)

// everywhereIngress routes everywhere.test to the Service everywhere of
// TestMultiNode, whose pods run on every node.
const everywhereIngress = `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: everywhere, namespace: demo}
spec:
  rules:
  - host: everywhere.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: everywhere, port: {number: 80}}}}
`

// checkIngressAcrossNodes: on the multi-node cluster, an Ingress is served
// through Traefik's LoadBalancer address by the pods of every node, Traefik
// on one node reaching the others' pods over the pod network; its address
// is the Service's.
func checkIngressAcrossNodes(t *testing.T, byNode map[string][2]string) {
	applyVerbatim(t, everywhereIngress)
	lb := lbAddress(t, releaseNS, "traefik")
	waitIngressAddress(t, "demo", "everywhere", lb)
	c := viaAddress(lb, nil)
	seen := map[string]bool{}
	slowly.ForNil(t, 60*time.Second, "Ingress everywhere.test reaching pods on every node", func() error {
		resp, err := c.Get("http://everywhere.test/hostname")
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%d %q: %v", resp.StatusCode, body, err)
		}
		seen[strings.TrimSpace(string(body))] = true
		for node, pod := range byNode {
			if !seen[pod[0]] {
				return fmt.Errorf("no answer yet from %s on %s (answers from %v)", pod[0], node, seen)
			}
		}
		return nil
	})
}
