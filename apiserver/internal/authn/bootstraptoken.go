package authn

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	corev1listers "k8s.io/client-go/listers/core/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"
	bootstraptokens "k8s.io/cluster-bootstrap/util/tokens"
)

// errBootstrapToken is what a rejected bootstrap token reports; which check
// failed is wrapped for the log and not sent to the client.
var errBootstrapToken = errors.New("invalid bootstrap token")

// BootstrapTokens authenticates "<id>.<secret>" tokens against Secrets of
// type bootstrap.kubernetes.io/token named bootstrap-token-<id> in
// kube-system, as joining nodes present them. It implements
// authenticator.Token.
type BootstrapTokens struct {
	// Secrets lists kube-system's Secrets.
	Secrets corev1listers.SecretNamespaceLister
	// Now is the clock expiry is checked against.
	Now func() time.Time
}

// AuthenticateToken implements authenticator.Token. Tokens not shaped like
// bootstrap tokens are left to other authenticators.
func (b *BootstrapTokens) AuthenticateToken(_ context.Context, token string) (*authenticator.Response, bool, error) {
	id, secret, err := bootstraptokens.ParseToken(token)
	if err != nil {
		return nil, false, nil
	}
	s, err := b.Secrets.Get(bootstraputil.BootstrapTokenSecretName(id))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", errBootstrapToken, id, err)
	}
	if err := b.check(s, id, secret); err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", errBootstrapToken, id, err)
	}
	groups, err := bootstrapsecrets.GetGroups(s)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", errBootstrapToken, id, err)
	}
	return &authenticator.Response{User: &user.DefaultInfo{
		Name:   bootstrapapi.BootstrapUserPrefix + id,
		Groups: groups,
	}}, true, nil
}

// check applies every rule a Secret must pass to vouch for id.secret.
func (b *BootstrapTokens) check(s *corev1.Secret, id, secret string) error {
	if s.DeletionTimestamp != nil {
		return errors.New("secret is being deleted")
	}
	if s.Type != bootstrapapi.SecretTypeBootstrapToken {
		return fmt.Errorf("secret has type %q", s.Type)
	}
	if bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenIDKey) != id {
		return errors.New("secret's token-id does not match its name")
	}
	stored := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenSecretKey)
	if subtle.ConstantTimeCompare([]byte(stored), []byte(secret)) != 1 {
		return errors.New("token secret does not match")
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	if bootstrapsecrets.HasExpired(s, now()) {
		return errors.New("token has expired")
	}
	if bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenUsageAuthentication) != "true" {
		return errors.New("token is not marked for authentication")
	}
	return nil
}
