package clientbuilder

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/oauth2"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// DefaultTokenLifetime is how long each requested token is valid; tokens
// are renewed after four fifths of it.
const DefaultTokenLifetime = time.Hour

// ServiceAccounts makes each controller's client authenticate as the
// ServiceAccount Namespace/name, with short-lived tokens from the
// TokenRequest API, renewed before they expire.
type ServiceAccounts struct {
	// Root is the manager's own config: the address and CA of the
	// apiserver, and the credentials used to create accounts and tokens.
	Root *rest.Config
	// Core creates the accounts and requests their tokens.
	Core kubernetes.Interface
	// Namespace holds the accounts; upstream uses kube-system.
	Namespace string
	// Lifetime of each token; zero means DefaultTokenLifetime.
	Lifetime time.Duration
	// Context bounds every API call the builder makes.
	Context context.Context
}

// Config implements Builder. It ensures the account exists and fetches a
// first token, so that a missing TokenRequest API fails here, at start.
func (b ServiceAccounts) Config(name string) (*rest.Config, error) {
	if err := b.ensureAccount(name); err != nil {
		return nil, err
	}
	src := transport.NewCachedTokenSource(tokenSource{b: b, name: name})
	if _, err := src.Token(); err != nil {
		return nil, err
	}
	cfg := rest.AnonymousClientConfig(b.Root)
	cfg.Wrap(transport.ResettableTokenSourceWrapTransport(src))
	return rest.AddUserAgent(cfg, UserAgent+"/"+name), nil
}

// Client implements Builder.
func (b ServiceAccounts) Client(name string) (kubernetes.Interface, error) {
	cfg, err := b.Config(name)
	if err != nil {
		return nil, err
	}
	return newClient(name, cfg)
}

func (b ServiceAccounts) ensureAccount(name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.Namespace}}
	_, err := b.Core.CoreV1().ServiceAccounts(b.Namespace).Create(b.Context, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create serviceaccount %s/%s: %w", b.Namespace, name, err)
	}
	return nil
}

// tokenSource requests a new token for one account at every call; the
// caching source in front of it calls it only when the last one is due.
type tokenSource struct {
	b    ServiceAccounts
	name string
}

func (t tokenSource) Token() (*oauth2.Token, error) {
	lifetime := t.b.Lifetime
	if lifetime <= 0 {
		lifetime = DefaultTokenLifetime
	}
	seconds := int64(lifetime / time.Second)
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	issued := time.Now()
	resp, err := t.b.Core.CoreV1().ServiceAccounts(t.b.Namespace).CreateToken(t.b.Context, t.name, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request token for serviceaccount %s/%s: %w", t.b.Namespace, t.name, err)
	}
	expiry := resp.Status.ExpirationTimestamp.Time
	if expiry.IsZero() {
		expiry = issued.Add(lifetime)
	}
	// Renew at four fifths of the granted lifetime, leaving time to retry.
	renew := issued.Add(expiry.Sub(issued) * 4 / 5)
	return &oauth2.Token{AccessToken: resp.Status.Token, TokenType: "Bearer", Expiry: renew}, nil
}
