package authorization

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Storage returns the review resources by name, answering with a and r.
func Storage(a authorizer.Authorizer, r authorizer.RuleResolver) map[string]rest.Storage {
	return map[string]rest.Storage{
		"subjectaccessreviews":      &review{kind: "SubjectAccessReview", a: a, answer: subjectAccessReview},
		"selfsubjectaccessreviews":  &review{kind: "SelfSubjectAccessReview", a: a, answer: selfSubjectAccessReview},
		"localsubjectaccessreviews": &review{kind: "LocalSubjectAccessReview", namespaced: true, a: a, answer: localSubjectAccessReview},
		"selfsubjectrulesreviews":   &review{kind: "SelfSubjectRulesReview", r: r, answer: selfSubjectRulesReview},
	}
}

// review is the create-only storage of one review kind.
type review struct {
	kind       string
	namespaced bool
	a          authorizer.Authorizer
	r          authorizer.RuleResolver
	// answer validates obj and fills its status.
	answer func(ctx context.Context, s *review, obj runtime.Object) error
}

var (
	_ rest.Creater              = (*review)(nil)
	_ rest.Scoper               = (*review)(nil)
	_ rest.SingularNameProvider = (*review)(nil)
)

// New implements rest.Storage.
func (s *review) New() runtime.Object {
	switch s.kind {
	case "SubjectAccessReview":
		return &authorizationv1.SubjectAccessReview{}
	case "SelfSubjectAccessReview":
		return &authorizationv1.SelfSubjectAccessReview{}
	case "LocalSubjectAccessReview":
		return &authorizationv1.LocalSubjectAccessReview{}
	default:
		return &authorizationv1.SelfSubjectRulesReview{}
	}
}

// Destroy implements rest.Storage; reviews keep nothing.
func (s *review) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (s *review) NamespaceScoped() bool { return s.namespaced }

// GetSingularName implements rest.SingularNameProvider.
func (s *review) GetSingularName() string {
	return map[string]string{
		"SubjectAccessReview": "subjectaccessreview", "SelfSubjectAccessReview": "selfsubjectaccessreview",
		"LocalSubjectAccessReview": "localsubjectaccessreview", "SelfSubjectRulesReview": "selfsubjectrulesreview",
	}[s.kind]
}

// Create implements rest.Creater: it answers the question, stores nothing,
// and returns the object with its status filled.
func (s *review) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if err := s.answer(ctx, s, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

func (s *review) invalid(name string, errs field.ErrorList) error {
	return apierrors.NewInvalid(authorizationv1.SchemeGroupVersion.WithKind(s.kind).GroupKind(), name, errs)
}

// emptyMeta checks that a review carries no metadata but managed fields,
// which server-side apply adds.
func emptyMeta(m metav1.ObjectMeta) field.ErrorList {
	m.ManagedFields = nil
	if !apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, m) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), m, "must be empty")}
	}
	return nil
}

// attributesSet checks that exactly one kind of question is asked.
func attributesSet(res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes, fldPath *field.Path) field.ErrorList {
	switch {
	case res != nil && nonRes != nil:
		return field.ErrorList{field.Invalid(fldPath.Child("nonResourceAttributes"), nonRes, "cannot be specified in combination with resourceAttributes")}
	case res == nil && nonRes == nil:
		return field.ErrorList{field.Invalid(fldPath.Child("resourceAttributes"), res, "exactly one of nonResourceAttributes or resourceAttributes must be specified")}
	}
	return nil
}

func subjectAccessReview(ctx context.Context, s *review, obj runtime.Object) error {
	sar := obj.(*authorizationv1.SubjectAccessReview)
	spec := field.NewPath("spec")
	errs := append(emptyMeta(sar.ObjectMeta), attributesSet(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes, spec)...)
	if sar.Spec.User == "" && len(sar.Spec.Groups) == 0 {
		errs = append(errs, field.Invalid(spec.Child("user"), sar.Spec.User, "at least one of user or group must be specified"))
	}
	if len(errs) > 0 {
		return s.invalid(sar.Name, errs)
	}
	attrs := attributes(specUser(&sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	d, reason, err := s.a.Authorize(ctx, attrs)
	decide(&sar.Status, d, reason, err)
	return nil
}

func selfSubjectAccessReview(ctx context.Context, s *review, obj runtime.Object) error {
	sar := obj.(*authorizationv1.SelfSubjectAccessReview)
	errs := append(emptyMeta(sar.ObjectMeta), attributesSet(sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes, field.NewPath("spec"))...)
	if len(errs) > 0 {
		return s.invalid(sar.Name, errs)
	}
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewBadRequest("no user present on request")
	}
	d, reason, err := s.a.Authorize(ctx, attributes(u, sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes))
	decide(&sar.Status, d, reason, err)
	return nil
}

func localSubjectAccessReview(ctx context.Context, s *review, obj runtime.Object) error {
	sar := obj.(*authorizationv1.LocalSubjectAccessReview)
	namespace := genericapirequest.NamespaceValue(ctx)
	if namespace == "" {
		return apierrors.NewBadRequest("namespace is required on this type")
	}
	spec := field.NewPath("spec")
	meta := sar.ObjectMeta
	meta.Namespace = ""
	errs := emptyMeta(meta)
	if sar.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(spec.Child("nonResourceAttributes"), sar.Spec.NonResourceAttributes, "disallowed on this kind of request"))
	} else if sar.Spec.ResourceAttributes == nil {
		errs = append(errs, field.Invalid(spec.Child("resourceAttributes"), nil, "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	}
	if sar.Spec.User == "" && len(sar.Spec.Groups) == 0 {
		errs = append(errs, field.Invalid(spec.Child("user"), sar.Spec.User, "at least one of user or group must be specified"))
	}
	if len(errs) > 0 {
		return s.invalid(sar.Name, errs)
	}
	if sar.Spec.ResourceAttributes.Namespace != namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", namespace))
	}
	d, reason, err := s.a.Authorize(ctx, attributes(specUser(&sar.Spec), sar.Spec.ResourceAttributes, nil))
	decide(&sar.Status, d, reason, err)
	return nil
}

func selfSubjectRulesReview(ctx context.Context, s *review, obj runtime.Object) error {
	rr := obj.(*authorizationv1.SelfSubjectRulesReview)
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewBadRequest("no user present on request")
	}
	ns := rr.Spec.Namespace
	if ns == "" {
		ns = genericapirequest.NamespaceValue(ctx)
	}
	resRules, nonResRules, incomplete, err := s.r.RulesFor(ctx, u, ns)
	rr.Status = authorizationv1.SubjectRulesReviewStatus{Incomplete: incomplete,
		ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{}}
	if err != nil {
		rr.Status.EvaluationError = err.Error()
	}
	for _, r := range resRules {
		rr.Status.ResourceRules = append(rr.Status.ResourceRules, authorizationv1.ResourceRule{
			Verbs: r.GetVerbs(), APIGroups: r.GetAPIGroups(), Resources: r.GetResources(), ResourceNames: r.GetResourceNames()})
	}
	for _, r := range nonResRules {
		rr.Status.NonResourceRules = append(rr.Status.NonResourceRules, authorizationv1.NonResourceRule{
			Verbs: r.GetVerbs(), NonResourceURLs: r.GetNonResourceURLs()})
	}
	return nil
}
