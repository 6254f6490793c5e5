package authentication

import (
	"context"
	"fmt"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/registry/rest"
)

// TokenReviewStore answers TokenReviews with the server's own token
// authenticators.
type TokenReviewStore struct {
	// Authenticator authenticates a request carrying only the bearer token.
	Authenticator authenticator.Request
}

var (
	_ rest.Creater              = &TokenReviewStore{}
	_ rest.Scoper               = &TokenReviewStore{}
	_ rest.SingularNameProvider = &TokenReviewStore{}
	_ rest.Storage              = &TokenReviewStore{}
)

// New implements rest.Storage.
func (s *TokenReviewStore) New() runtime.Object { return &authenticationv1.TokenReview{} }

// Destroy implements rest.Storage.
func (s *TokenReviewStore) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (s *TokenReviewStore) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (s *TokenReviewStore) GetSingularName() string { return "tokenreview" }

// Create implements rest.Creater.
func (s *TokenReviewStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	review, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenReview: %T", obj))
	}
	if review.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if len(review.Spec.Audiences) > 0 {
		ctx = authenticator.WithAudiences(ctx, review.Spec.Audiences)
	}
	req := (&http.Request{Header: http.Header{}}).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+review.Spec.Token)
	resp, ok, err := s.Authenticator.AuthenticateRequest(req)
	out := review.DeepCopy()
	out.Status = authenticationv1.TokenReviewStatus{Authenticated: ok && err == nil}
	if err != nil {
		out.Status.Error = err.Error()
	}
	if out.Status.Authenticated {
		out.Status.User = userInfo(resp.User)
		out.Status.Audiences = resp.Audiences
	}
	return out, nil
}

// userInfo converts an authenticated user to its API form.
func userInfo(u user.Info) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	if extra := u.GetExtra(); len(extra) > 0 {
		info.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range extra {
			info.Extra[k] = authenticationv1.ExtraValue(v)
		}
	}
	return info
}
