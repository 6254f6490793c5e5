package authorization

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// attributes turns a review's question into authorizer attributes.
func attributes(u user.Info, res *authorizationv1.ResourceAttributes, nonRes *authorizationv1.NonResourceAttributes) authorizer.AttributesRecord {
	if res == nil {
		return authorizer.AttributesRecord{User: u, Verb: nonRes.Verb, Path: nonRes.Path, ResourceRequest: false}
	}
	version := res.Version
	if version == "" {
		// An unspecified version matches any, as upstream treats it.
		version = "*"
	}
	rec := authorizer.AttributesRecord{
		User: u, Verb: res.Verb, Namespace: res.Namespace, APIGroup: res.Group, APIVersion: version,
		Resource: res.Resource, Subresource: res.Subresource, Name: res.Name, ResourceRequest: true,
	}
	if fs := res.FieldSelector; fs != nil {
		rec.FieldSelectorRequirements, rec.FieldSelectorParsingErr = fieldRequirements(fs)
	}
	if ls := res.LabelSelector; ls != nil {
		rec.LabelSelectorRequirements, rec.LabelSelectorParsingErr = labelRequirements(ls)
	}
	return rec
}

func fieldRequirements(fs *authorizationv1.FieldSelectorAttributes) (fields.Requirements, error) {
	if fs.RawSelector != "" {
		sel, err := fields.ParseSelector(fs.RawSelector)
		if err != nil {
			return nil, err
		}
		return sel.Requirements(), nil
	}
	var out fields.Requirements
	for _, r := range fs.Requirements {
		// Only single-valued In and NotIn mean something for fields.
		if len(r.Values) != 1 {
			continue
		}
		switch r.Operator {
		case "In":
			out = append(out, fields.Requirement{Field: r.Key, Operator: selection.Equals, Value: r.Values[0]})
		case "NotIn":
			out = append(out, fields.Requirement{Field: r.Key, Operator: selection.NotEquals, Value: r.Values[0]})
		}
	}
	return out, nil
}

func labelRequirements(ls *authorizationv1.LabelSelectorAttributes) (labels.Requirements, error) {
	if ls.RawSelector != "" {
		sel, err := labels.Parse(ls.RawSelector)
		if err != nil {
			return nil, err
		}
		reqs, _ := sel.Requirements()
		return reqs, nil
	}
	var out labels.Requirements
	for _, r := range ls.Requirements {
		req, err := labels.NewRequirement(r.Key, selection.Operator(lowerOp(string(r.Operator))), r.Values)
		if err != nil {
			return out, err
		}
		out = append(out, *req)
	}
	return out, nil
}

// lowerOp maps metav1 label selector operators to the selection package's.
func lowerOp(op string) string {
	switch op {
	case "In":
		return string(selection.In)
	case "NotIn":
		return string(selection.NotIn)
	case "Exists":
		return string(selection.Exists)
	case "DoesNotExist":
		return string(selection.DoesNotExist)
	}
	return op
}

// specUser is the user a SubjectAccessReview asks about.
func specUser(spec *authorizationv1.SubjectAccessReviewSpec) user.Info {
	extra := map[string][]string{}
	for k, v := range spec.Extra {
		extra[k] = v
	}
	return &user.DefaultInfo{Name: spec.User, UID: spec.UID, Groups: spec.Groups, Extra: extra}
}

// decide asks a and writes the answer into status.
func decide(status *authorizationv1.SubjectAccessReviewStatus, d authorizer.Decision, reason string, err error) {
	status.Allowed = d == authorizer.DecisionAllow
	status.Denied = d == authorizer.DecisionDeny
	status.Reason = reason
	if err != nil {
		status.EvaluationError = err.Error()
	}
}
