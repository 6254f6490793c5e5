package satoken

import (
	"crypto"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/go-jose/go-jose/v4"
)

// The paths of OpenID Connect discovery for the service-account issuer, as
// upstream serves them.
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/openid/v1/jwks"
)

// Discovery serves the service-account issuer's OpenID Connect discovery
// document and its key set, so that anything outside the cluster (a cloud's
// workload identity, Vault, a pod with an OIDC library) can verify the
// tokens without asking the API server to review each one.
type Discovery struct {
	config, keys []byte
}

// discoveryConfig is the subset of OpenID Provider Metadata that describes
// an issuer of ID tokens alone (no authorization endpoint, no flows).
type discoveryConfig struct {
	Issuer           string   `json:"issuer"`
	JWKSURI          string   `json:"jwks_uri"`
	ResponseTypes    []string `json:"response_types_supported"`
	SubjectTypes     []string `json:"subject_types_supported"`
	SigningAlgValues []string `json:"id_token_signing_alg_values_supported"`
}

// NewDiscovery returns the documents for issuer, whose keys are published
// at jwksURI. The issuer must be an https URL without query or fragment,
// as OpenID Connect requires.
func NewDiscovery(issuer, jwksURI string, keys []crypto.PublicKey) (*Discovery, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("service account issuer %q is not an https URL: discovery needs one", issuer)
	}
	if j, err := url.Parse(jwksURI); err != nil || j.Scheme != "https" || j.Host == "" {
		return nil, fmt.Errorf("jwks URI %q is not an https URL", jwksURI)
	}
	set := jose.JSONWebKeySet{}
	var algs []string
	for _, k := range keys {
		alg, err := algorithmFor(k)
		if err != nil {
			return nil, err
		}
		kid, err := keyID(k)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(set.Keys, func(j jose.JSONWebKey) bool { return j.KeyID == kid }) {
			continue // the signing key is often also given as a verification key
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(alg), Use: "sig"})
		if !slices.Contains(algs, string(alg)) {
			algs = append(algs, string(alg))
		}
	}
	slices.Sort(algs)
	config, err := json.Marshal(discoveryConfig{
		Issuer: issuer, JWKSURI: jwksURI,
		ResponseTypes: []string{"id_token"}, SubjectTypes: []string{"public"}, SigningAlgValues: algs,
	})
	if err != nil {
		return nil, fmt.Errorf("encode discovery document: %w", err)
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("encode key set: %w", err)
	}
	return &Discovery{config: config, keys: jwks}, nil
}

// ServeConfig answers the discovery document.
func (d *Discovery) ServeConfig(w http.ResponseWriter, r *http.Request) {
	serveDocument(w, r, "application/json", d.config)
}

// ServeKeys answers the key set.
func (d *Discovery) ServeKeys(w http.ResponseWriter, r *http.Request) {
	serveDocument(w, r, "application/jwk-set+json", d.keys)
}

// serveDocument writes a fixed document that verifiers may cache for an
// hour, as upstream lets them.
func serveDocument(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}
