package satoken

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Extra keys the verifier puts on the user so that authorizers (the node
// authorizer) and audit can see which pod or node a token belongs to.
const (
	ExtraPodName      = "authentication.kubernetes.io/pod-name"
	ExtraPodUID       = "authentication.kubernetes.io/pod-uid"
	ExtraNodeName     = "authentication.kubernetes.io/node-name"
	ExtraNodeUID      = "authentication.kubernetes.io/node-uid"
	ExtraCredentialID = "authentication.kubernetes.io/credential-id"
)

// Groups every service account belongs to; the second gets the namespace
// appended.
const (
	AllServiceAccountsGroup       = "system:serviceaccounts"
	NamespaceServiceAccountsGroup = "system:serviceaccounts:"
)

// leeway absorbs clock skew between the issuer and this verifier, which in a
// multi-apiserver cluster are different machines.
const leeway = time.Minute

// Objects looks up the objects a token names, so that deleting (or
// recreating) them revokes the token. A missing object is reported with an
// error for which apierrors.IsNotFound holds.
type Objects interface {
	ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	Node(ctx context.Context, name string) (*corev1.Node, error)
}

// Verifier authenticates service-account tokens. It implements
// authenticator.Token.
type Verifier struct {
	issuers   map[string]bool
	keys      []crypto.PublicKey
	audiences authenticator.Audiences
	objects   Objects
	now       func() time.Time
}

// NewVerifier accepts tokens whose iss is one of issuers, signed by one of
// keys. Requests without audiences in their context are checked against
// audiences.
func NewVerifier(issuers []string, keys []crypto.PublicKey, audiences []string, objects Objects) (*Verifier, error) {
	if len(issuers) == 0 || len(keys) == 0 || len(audiences) == 0 || objects == nil {
		return nil, fmt.Errorf("service account token verifier needs issuers, keys, audiences and an object getter")
	}
	for _, k := range keys {
		if _, err := algorithmFor(k); err != nil {
			return nil, err
		}
	}
	v := &Verifier{issuers: map[string]bool{}, keys: keys, audiences: audiences, objects: objects, now: time.Now}
	for _, iss := range issuers {
		v.issuers[iss] = true
	}
	return v, nil
}

// errInvalid is what every rejected token of ours reports; the details go
// to the log through the wrapped cause, never to the client.
var errInvalid = errors.New("invalid bearer token")

// AuthenticateToken implements authenticator.Token. Tokens that are not
// JWTs, or whose issuer is not ours, are left to other authenticators
// (ok=false, no error); ours are either accepted or rejected with an error.
func (v *Verifier) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	parsed, err := jwt.ParseSigned(token, allowedAlgorithms)
	if err != nil {
		return nil, false, nil
	}
	var unverified jwt.Claims
	if err := parsed.UnsafeClaimsWithoutVerification(&unverified); err != nil || !v.issuers[unverified.Issuer] {
		return nil, false, nil
	}
	claims, err := v.verifySignature(parsed)
	if err != nil {
		return nil, false, err
	}
	auds, err := v.checkClaims(ctx, claims)
	if err != nil {
		return nil, false, err
	}
	u, err := v.checkObjects(ctx, claims)
	if err != nil {
		return nil, false, err
	}
	return &authenticator.Response{User: u, Audiences: auds}, true, nil
}

// verifySignature tries every key; a key rotation leaves old keys listed
// until the tokens they signed expire.
func (v *Verifier) verifySignature(parsed *jwt.JSONWebToken) (*tokenClaims, error) {
	kid := ""
	if len(parsed.Headers) > 0 {
		kid = parsed.Headers[0].KeyID
	}
	// Try the key named by kid first, then the rest.
	ordered := make([]crypto.PublicKey, 0, len(v.keys))
	for _, k := range v.keys {
		if id, err := keyID(k); err == nil && id == kid {
			ordered = append([]crypto.PublicKey{k}, ordered...)
		} else {
			ordered = append(ordered, k)
		}
	}
	for _, k := range ordered {
		var c tokenClaims
		if err := parsed.Claims(k, &c); err == nil {
			return &c, nil
		}
	}
	return nil, fmt.Errorf("%w: signature does not verify with any service account key", errInvalid)
}

// checkClaims validates the registered claims and returns the audiences the
// token is good for.
func (v *Verifier) checkClaims(ctx context.Context, c *tokenClaims) (authenticator.Audiences, error) {
	if c.Expiry == nil {
		return nil, fmt.Errorf("%w: token has no expiry", errInvalid)
	}
	if err := c.Claims.ValidateWithLeeway(jwt.Expected{Time: v.now()}, leeway); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalid, err)
	}
	wanted, ok := authenticator.AudiencesFrom(ctx)
	if !ok || len(wanted) == 0 {
		wanted = v.audiences
	}
	auds := wanted.Intersect(authenticator.Audiences(c.Audience))
	if len(auds) == 0 {
		return nil, fmt.Errorf("%w: token audiences %q do not match %q", errInvalid, []string(c.Audience), []string(wanted))
	}
	return auds, nil
}

// checkObjects makes sure the service account and every bound object still
// exist with the UIDs the token names, and builds the user.
func (v *Verifier) checkObjects(ctx context.Context, c *tokenClaims) (user.Info, error) {
	k := c.Kubernetes
	if k == nil {
		return nil, fmt.Errorf("%w: token lacks the kubernetes.io claim", errInvalid)
	}
	ns, name, ok := splitSubject(c.Subject)
	if !ok || ns != k.Namespace || name != k.ServiceAccount.Name {
		return nil, fmt.Errorf("%w: subject %q does not match the kubernetes.io claim", errInvalid, c.Subject)
	}
	sa, err := v.objects.ServiceAccount(ctx, ns, name)
	if err != nil {
		return nil, fmt.Errorf("%w: service account %s/%s: %v", errInvalid, ns, name, err)
	}
	if err := sameLiveObject(&sa.ObjectMeta, k.ServiceAccount, v.now()); err != nil {
		return nil, fmt.Errorf("%w: service account %s/%s: %v", errInvalid, ns, name, err)
	}
	extra := map[string][]string{}
	if c.ID != "" {
		extra[ExtraCredentialID] = []string{"JTI=" + c.ID}
	}
	if k.Pod != nil {
		pod, err := v.objects.Pod(ctx, ns, k.Pod.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: bound pod %s/%s: %v", errInvalid, ns, k.Pod.Name, err)
		}
		if err := sameLiveObject(&pod.ObjectMeta, *k.Pod, v.now()); err != nil {
			return nil, fmt.Errorf("%w: bound pod %s/%s: %v", errInvalid, ns, k.Pod.Name, err)
		}
		extra[ExtraPodName] = []string{k.Pod.Name}
		extra[ExtraPodUID] = []string{k.Pod.UID}
	}
	if k.Secret != nil {
		secret, err := v.objects.Secret(ctx, ns, k.Secret.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: bound secret %s/%s: %v", errInvalid, ns, k.Secret.Name, err)
		}
		if err := sameLiveObject(&secret.ObjectMeta, *k.Secret, v.now()); err != nil {
			return nil, fmt.Errorf("%w: bound secret %s/%s: %v", errInvalid, ns, k.Secret.Name, err)
		}
	}
	switch {
	case k.Node != nil && k.Pod != nil:
		// A pod's token names the pod's node for the record (the Node
		// authorizer and admission read it); the pod is what binds it.
		extra[ExtraNodeName] = []string{k.Node.Name}
		if k.Node.UID != "" {
			extra[ExtraNodeUID] = []string{k.Node.UID}
		}
	case k.Node != nil:
		node, err := v.objects.Node(ctx, k.Node.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: bound node %s: %v", errInvalid, k.Node.Name, err)
		}
		if err := sameLiveObject(&node.ObjectMeta, *k.Node, v.now()); err != nil {
			return nil, fmt.Errorf("%w: bound node %s: %v", errInvalid, k.Node.Name, err)
		}
		extra[ExtraNodeName] = []string{k.Node.Name}
		extra[ExtraNodeUID] = []string{k.Node.UID}
	}
	return &user.DefaultInfo{
		Name:   c.Subject,
		UID:    string(sa.UID),
		Groups: []string{AllServiceAccountsGroup, NamespaceServiceAccountsGroup + ns},
		Extra:  extra,
	}, nil
}

// sameLiveObject fails when the object was recreated (other UID) or its
// deletion is due: a pod in graceful termination keeps working tokens until
// its deletion timestamp passes.
func sameLiveObject(meta *metav1.ObjectMeta, ref ObjectRef, now time.Time) error {
	if meta.UID != types.UID(ref.UID) {
		return fmt.Errorf("uid %s does not match the token's %s", meta.UID, ref.UID)
	}
	if meta.DeletionTimestamp != nil && !meta.DeletionTimestamp.Time.After(now) {
		return fmt.Errorf("being deleted")
	}
	return nil
}
