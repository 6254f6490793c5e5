// Package console is a client of trireme-dashboard as its page is one: the
// page's cookies (session and CSRF), the token sign-in, and requests that
// carry the CSRF header and the page's Origin.
package console

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// Browser is one page's session with the console at Base.
type Browser struct {
	// Base is the console's URL, https://host:port.
	Base string
	// CSRF is the token of the page's trireme-csrf cookie.
	CSRF string
	t    testing.TB
	c    *http.Client
}

// Answer is a response: its status, body and headers.
type Answer struct {
	Code   int
	Body   string
	Header http.Header
}

// Open loads the page at base, as a browser does, and fails the test
// unless it is the console's page with its Content-Security-Policy and a
// CSRF cookie. The console's certificate is not verified: it is
// self-signed, or the cluster's own.
func Open(t testing.TB, base string) *Browser {
	t.Helper()
	return OpenWith(t, base, &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}})
}

// OpenWith is Open through transport, which decides how the console's
// certificate is checked and where base's host is reached (an ingress
// controller's address, as curl --resolve does).
func OpenWith(t testing.TB, base string, transport http.RoundTripper) *Browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &Browser{t: t, Base: base, c: &http.Client{Jar: jar, Transport: transport}}
	r := b.Do("GET", "/", "", nil)
	if r.Code != http.StatusOK || !strings.Contains(r.Body, "app.js") {
		t.Fatalf("GET / = %d %s", r.Code, r.Body)
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP = %q", csp)
	}
	u, _ := url.Parse(base)
	for _, c := range jar.Cookies(u) {
		if c.Name == "trireme-csrf" {
			b.CSRF = c.Value
		}
	}
	if b.CSRF == "" {
		t.Fatal("no CSRF cookie")
	}
	return b
}

// Do sends a request with the page's cookies and the headers in hdr.
func (b *Browser) Do(method, path, body string, hdr map[string]string) Answer {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), method, b.Base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	r, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer func() { _ = r.Body.Close() }()
	data, _ := io.ReadAll(r.Body)
	return Answer{r.StatusCode, string(data), r.Header}
}

// Post sends v as JSON, as the page's actions do.
func (b *Browser) Post(path string, v any) Answer {
	b.t.Helper()
	data, _ := json.Marshal(v)
	return b.Do("POST", path, string(data), map[string]string{"Content-Type": "application/json", "X-CSRF-Token": b.CSRF, "Origin": b.Base})
}

// SignIn signs in with a bearer token, as the page's form does.
func (b *Browser) SignIn(token string) Answer {
	b.t.Helper()
	return b.Do("POST", "/login", url.Values{"token": {token}}.Encode(), map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "X-CSRF-Token": b.CSRF, "Origin": b.Base})
}

// Stream starts a GET whose body the caller reads as it comes, as the page
// reads its server-sent watches; cancelling ctx ends it.
func (b *Browser) Stream(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", b.Base+path, nil)
	if err != nil {
		return nil, err
	}
	return b.c.Do(req)
}
