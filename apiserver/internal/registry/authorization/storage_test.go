package authorization

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// podReader allows alice to get pods in demo, and /healthz to everyone.
var podReader = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if !a.IsResourceRequest() && a.GetPath() == "/healthz" {
		return authorizer.DecisionAllow, "public", nil
	}
	if a.GetUser().GetName() == "alice" && a.GetVerb() == "get" && a.GetResource() == "pods" && a.GetNamespace() == "demo" {
		return authorizer.DecisionAllow, "bound", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

type staticRules struct{}

func (staticRules) RulesFor(_ context.Context, u user.Info, ns string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{ns + "-pods"}}},
		[]authorizer.NonResourceRuleInfo{&authorizer.DefaultNonResourceRuleInfo{Verbs: []string{"get"}, NonResourceURLs: []string{"/" + u.GetName()}}}, false, nil
}

func TestReviews(t *testing.T) {
	stores := Storage(podReader, staticRules{})
	alice := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "alice"})
	inDemo := genericapirequest.WithNamespace(alice, "demo")
	getPods := &authorizationv1.ResourceAttributes{Namespace: "demo", Verb: "get", Resource: "pods"}
	create := func(ctx context.Context, resource string, obj runtime.Object) (runtime.Object, error) {
		return stores[resource].(rest.Creater).Create(ctx, obj, nil, &metav1.CreateOptions{})
	}
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		resource string
		obj      runtime.Object
		allowed  bool
		invalid  bool
		bad      bool
	}{
		{"subject access review allowed", context.Background(), "subjectaccessreviews", &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: getPods}}, true, false, false},
		{"subject access review denied", context.Background(), "subjectaccessreviews", &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: getPods}}, false, false, false},
		{"subject access review without user or group", context.Background(), "subjectaccessreviews", &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: getPods}}, false, true, false},
		{"both kinds of attributes", context.Background(), "subjectaccessreviews", &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "a", ResourceAttributes: getPods, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/x", Verb: "get"}}}, false, true, false},
		{"metadata must be empty", context.Background(), "subjectaccessreviews", &authorizationv1.SubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: authorizationv1.SubjectAccessReviewSpec{User: "a", ResourceAttributes: getPods}}, false, true, false},
		{"self review uses the requester", alice, "selfsubjectaccessreviews", &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: getPods}}, true, false, false},
		{"self review of a path", alice, "selfsubjectaccessreviews", &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}}}, true, false, false},
		{"local review in its namespace", inDemo, "localsubjectaccessreviews", &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "demo"}, Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: getPods}}, true, false, false},
		{"local review of another namespace", genericapirequest.WithNamespace(alice, "other"), "localsubjectaccessreviews", &authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: getPods}}, false, false, true},
		{"local review of a path", inDemo, "localsubjectaccessreviews", &authorizationv1.LocalSubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/x"}}}, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := create(tc.ctx, tc.resource, tc.obj)
			switch {
			case tc.invalid:
				if !apierrors.IsInvalid(err) {
					t.Errorf("err = %v, want Invalid", err)
				}
				return
			case tc.bad:
				if !apierrors.IsBadRequest(err) {
					t.Errorf("err = %v, want BadRequest", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var status authorizationv1.SubjectAccessReviewStatus
			switch o := out.(type) {
			case *authorizationv1.SubjectAccessReview:
				status = o.Status
			case *authorizationv1.SelfSubjectAccessReview:
				status = o.Status
			case *authorizationv1.LocalSubjectAccessReview:
				status = o.Status
			}
			if status.Allowed != tc.allowed {
				t.Errorf("allowed = %v (%+v), want %v", status.Allowed, status, tc.allowed)
			}
		})
	}
	t.Run("self rules review lists the requester's rules", func(t *testing.T) {
		out, err := create(alice, "selfsubjectrulesreviews", &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "demo"}})
		if err != nil {
			t.Fatal(err)
		}
		st := out.(*authorizationv1.SelfSubjectRulesReview).Status
		if len(st.ResourceRules) != 1 || st.ResourceRules[0].Resources[0] != "demo-pods" || st.NonResourceRules[0].NonResourceURLs[0] != "/alice" {
			t.Errorf("status = %+v", st)
		}
	})
}
