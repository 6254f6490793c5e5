// Package serviceaccounts serves the serviceaccounts/token subresource: a
// POST of an authentication.k8s.io/v1 TokenRequest returns a signed,
// expiring service-account token, optionally bound to a Pod, Secret or Node.
package serviceaccounts

import (
	"context"
	"fmt"
	"math"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"trireme.dev/apiserver/internal/authn/satoken"
)

// Lifetime limits of requested tokens, as upstream enforces them.
const (
	DefaultExpirationSeconds = 3600
	MinExpirationSeconds     = 600
	maxExpirationSeconds     = math.MaxUint32
)

// Signer issues the token; *authn.TokenIssuer implements it.
type Signer interface {
	Sign(satoken.Request) (string, time.Time, error)
}

// Getter reads one object of a resource, as the registry stores do.
type Getter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
}

// TokenStore serves serviceaccounts/token.
type TokenStore struct {
	// ServiceAccounts, Pods, Secrets and Nodes read the objects a token names.
	ServiceAccounts, Pods, Secrets, Nodes Getter
	// Signer signs the tokens.
	Signer Signer
	// APIAudiences are used when the request names no audience.
	APIAudiences []string
	// MaxExpiration caps the lifetime; 0 means no cap.
	MaxExpiration time.Duration
}

var (
	_ rest.NamedCreater             = &TokenStore{}
	_ rest.GroupVersionKindProvider = &TokenStore{}
	_ rest.Storage                  = &TokenStore{}
)

var tokenRequestGVK = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// New implements rest.Storage.
func (s *TokenStore) New() runtime.Object { return &authenticationv1.TokenRequest{} }

// Destroy implements rest.Storage.
func (s *TokenStore) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider: the body is an
// authentication.k8s.io/v1 TokenRequest although the URL is in core/v1.
func (s *TokenStore) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return tokenRequestGVK
}

// Create implements rest.NamedCreater.
func (s *TokenStore) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest: %T", obj))
	}
	ns, _ := genericapirequest.NamespaceFrom(ctx)
	if req.Name != "" && req.Name != name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in TokenRequest object")
	}
	if req.Namespace != "" && req.Namespace != ns {
		return nil, apierrors.NewBadRequest("namespace in URL does not match namespace in TokenRequest object")
	}
	s.defaults(req)
	if errs := s.validate(req); len(errs) > 0 {
		return nil, apierrors.NewInvalid(tokenRequestGVK.GroupKind(), name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, req.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	saObj, err := s.ServiceAccounts.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sa := saObj.(*corev1.ServiceAccount)
	sign := satoken.Request{
		Namespace: ns,
		Name:      sa.Name,
		UID:       string(sa.UID),
		Audiences: req.Spec.Audiences,
		Lifetime:  time.Duration(*req.Spec.ExpirationSeconds) * time.Second,
	}
	if err := s.bind(ctx, req, sa, &sign); err != nil {
		return nil, err
	}
	out := req.DeepCopy()
	out.Name, out.Namespace = name, ns
	out.CreationTimestamp = metav1.Now()
	if len(options.DryRun) > 0 {
		return out, nil
	}
	token, exp, err := s.Signer.Sign(sign)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("sign token: %w", err))
	}
	out.Status = authenticationv1.TokenRequestStatus{Token: token, ExpirationTimestamp: metav1.NewTime(exp)}
	return out, nil
}

// defaults fills what the request may leave out, and caps the lifetime.
func (s *TokenStore) defaults(req *authenticationv1.TokenRequest) {
	if req.Spec.ExpirationSeconds == nil {
		secs := int64(DefaultExpirationSeconds)
		req.Spec.ExpirationSeconds = &secs
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = append([]string(nil), s.APIAudiences...)
	}
	if maxSecs := int64(s.MaxExpiration / time.Second); maxSecs > 0 && *req.Spec.ExpirationSeconds > maxSecs {
		secs := maxSecs
		req.Spec.ExpirationSeconds = &secs
	}
}

// validate checks the spec after defaulting.
func (s *TokenStore) validate(req *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if secs := *req.Spec.ExpirationSeconds; secs < MinExpirationSeconds {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), secs, "may not specify a duration less than 10 minutes"))
	} else if secs > maxExpirationSeconds {
		errs = append(errs, field.TooLong(spec.Child("expirationSeconds"), secs, maxExpirationSeconds))
	}
	for i, a := range req.Spec.Audiences {
		if a == "" {
			errs = append(errs, field.Required(spec.Child("audiences").Index(i), "audience may not be empty"))
		}
	}
	if ref := req.Spec.BoundObjectRef; ref != nil {
		p := spec.Child("boundObjectRef")
		switch ref.Kind {
		case "Pod", "Secret", "Node":
		default:
			errs = append(errs, field.NotSupported(p.Child("kind"), ref.Kind, []string{"Pod", "Secret", "Node"}))
		}
		if ref.APIVersion != "v1" {
			errs = append(errs, field.NotSupported(p.Child("apiVersion"), ref.APIVersion, []string{"v1"}))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
	}
	return errs
}

// podNode names the node pod runs on, as upstream's pod-bound tokens do;
// a node that cannot be read is named without its UID.
func (s *TokenStore) podNode(ctx context.Context, pod *corev1.Pod) *satoken.ObjectRef {
	if pod.Spec.NodeName == "" {
		return nil
	}
	ref := &satoken.ObjectRef{Name: pod.Spec.NodeName}
	if obj, err := s.Nodes.Get(ctx, pod.Spec.NodeName, &metav1.GetOptions{}); err == nil {
		if node, ok := obj.(*corev1.Node); ok {
			ref.UID = string(node.UID)
		}
	}
	return ref
}

// bind looks up the bound object and records its name and UID in the token.
func (s *TokenStore) bind(ctx context.Context, req *authenticationv1.TokenRequest, sa *corev1.ServiceAccount, sign *satoken.Request) error {
	ref := req.Spec.BoundObjectRef
	if ref == nil {
		return nil
	}
	var getter Getter
	switch ref.Kind {
	case "Pod":
		getter = s.Pods
	case "Secret":
		getter = s.Secrets
	default:
		getter = s.Nodes
	}
	obj, err := getter.Get(ctx, ref.Name, &metav1.GetOptions{})
	if err != nil {
		return err
	}
	var meta *metav1.ObjectMeta
	switch o := obj.(type) {
	case *corev1.Pod:
		if o.Spec.ServiceAccountName != sa.Name {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name %q", sa.Name, o.Spec.ServiceAccountName))
		}
		meta = &o.ObjectMeta
		sign.Pod = &satoken.ObjectRef{Name: o.Name, UID: string(o.UID)}
		sign.Node = s.podNode(ctx, o)
	case *corev1.Secret:
		meta = &o.ObjectMeta
		sign.Secret = &satoken.ObjectRef{Name: o.Name, UID: string(o.UID)}
	case *corev1.Node:
		meta = &o.ObjectMeta
		sign.Node = &satoken.ObjectRef{Name: o.Name, UID: string(o.UID)}
	default:
		return apierrors.NewInternalError(fmt.Errorf("unexpected bound object %T", obj))
	}
	if ref.UID != "" && ref.UID != meta.UID {
		return apierrors.NewConflict(schema.GroupResource{Resource: "serviceaccounts/token"}, req.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record (%s); the object might have been deleted and recreated", ref.UID, meta.UID))
	}
	return nil
}
