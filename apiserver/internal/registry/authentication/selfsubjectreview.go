package authentication

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// SelfSubjectReviewStore tells the caller who the server thinks it is.
type SelfSubjectReviewStore struct{}

var (
	_ rest.Creater              = &SelfSubjectReviewStore{}
	_ rest.Scoper               = &SelfSubjectReviewStore{}
	_ rest.SingularNameProvider = &SelfSubjectReviewStore{}
	_ rest.Storage              = &SelfSubjectReviewStore{}
)

// New implements rest.Storage.
func (s *SelfSubjectReviewStore) New() runtime.Object { return &authenticationv1.SelfSubjectReview{} }

// Destroy implements rest.Storage.
func (s *SelfSubjectReviewStore) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (s *SelfSubjectReviewStore) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (s *SelfSubjectReviewStore) GetSingularName() string { return "selfsubjectreview" }

// Create implements rest.Creater.
func (s *SelfSubjectReviewStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	review, ok := obj.(*authenticationv1.SelfSubjectReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a SelfSubjectReview: %T", obj))
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	out := review.DeepCopy()
	out.CreationTimestamp = metav1.Now()
	out.Status.UserInfo = userInfo(u)
	return out, nil
}
