package authentication

import (
	"context"
	"errors"
	"net/http"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// fixedAuthenticator accepts "good" and fails "bad"; it also reports the
// audiences the request context carried.
type fixedAuthenticator struct{}

func (fixedAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	switch req.Header.Get("Authorization") {
	case "Bearer good":
		auds, _ := authenticator.AudiencesFrom(req.Context())
		return &authenticator.Response{
			User:      &user.DefaultInfo{Name: "alice", UID: "a-uid", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}},
			Audiences: auds,
		}, true, nil
	case "Bearer bad":
		return nil, false, errors.New("invalid bearer token")
	}
	return nil, false, nil
}

func TestTokenReview(t *testing.T) {
	s := &TokenReviewStore{Authenticator: fixedAuthenticator{}}
	for _, tc := range []struct {
		name      string
		spec      authenticationv1.TokenReviewSpec
		wantAuthd bool
		wantError string
		wantBadRq bool
		wantAuds  int
	}{
		{name: "valid token", spec: authenticationv1.TokenReviewSpec{Token: "good"}, wantAuthd: true},
		{name: "valid token with audiences", spec: authenticationv1.TokenReviewSpec{Token: "good", Audiences: []string{"vault"}}, wantAuthd: true, wantAuds: 1},
		{name: "invalid token reports the error", spec: authenticationv1.TokenReviewSpec{Token: "bad"}, wantError: "invalid bearer token"},
		{name: "unknown token", spec: authenticationv1.TokenReviewSpec{Token: "other"}},
		{name: "empty token is a bad request", wantBadRq: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := s.Create(context.Background(), &authenticationv1.TokenReview{Spec: tc.spec}, nil, &metav1.CreateOptions{})
			if tc.wantBadRq {
				if !apierrors.IsBadRequest(err) {
					t.Fatalf("err = %v, want BadRequest", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := obj.(*authenticationv1.TokenReview).Status
			if st.Authenticated != tc.wantAuthd || st.Error != tc.wantError || len(st.Audiences) != tc.wantAuds {
				t.Fatalf("status = %+v", st)
			}
			if tc.wantAuthd && (st.User.Username != "alice" || st.User.UID != "a-uid" || st.User.Extra["k"][0] != "v") {
				t.Errorf("user = %+v", st.User)
			}
		})
	}
}

func TestSelfSubjectReview(t *testing.T) {
	s := &SelfSubjectReviewStore{}
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "system:serviceaccount:demo:default", Groups: []string{"system:serviceaccounts"}})
	obj, err := s.Create(ctx, &authenticationv1.SelfSubjectReview{}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*authenticationv1.SelfSubjectReview).Status.UserInfo; got.Username != "system:serviceaccount:demo:default" || got.Groups[0] != "system:serviceaccounts" {
		t.Fatalf("userInfo = %+v", got)
	}
	if _, err := s.Create(context.Background(), &authenticationv1.SelfSubjectReview{}, nil, &metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Fatalf("without a user: err = %v", err)
	}
}
