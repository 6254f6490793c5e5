package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// RuleAllows reports whether rule covers the request described by attrs.
func RuleAllows(attrs authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if !matchesAny(rule.Verbs, attrs.GetVerb()) {
		return false
	}
	if !attrs.IsResourceRequest() {
		return nonResourceURLMatches(rule.NonResourceURLs, attrs.GetPath())
	}
	return matchesAny(rule.APIGroups, attrs.GetAPIGroup()) &&
		resourceMatches(rule.Resources, attrs.GetResource(), attrs.GetSubresource()) &&
		(len(rule.ResourceNames) == 0 || contains(rule.ResourceNames, attrs.GetName()))
}

// RulesAllow reports whether any of rules covers attrs.
func RulesAllow(attrs authorizer.Attributes, rules []rbacv1.PolicyRule) bool {
	for i := range rules {
		if RuleAllows(attrs, &rules[i]) {
			return true
		}
	}
	return false
}

// matchesAny reports whether set holds value or the wildcard.
func matchesAny(set []string, value string) bool {
	for _, s := range set {
		if s == rbacv1.VerbAll || s == value {
			return true
		}
	}
	return false
}

func contains(set []string, value string) bool {
	for _, s := range set {
		if s == value {
			return true
		}
	}
	return false
}

// resourceMatches matches "pods", "pods/log", "*", and "*/scale" (the
// subresource of any resource).
func resourceMatches(set []string, resource, subresource string) bool {
	combined := resource
	if subresource != "" {
		combined = resource + "/" + subresource
	}
	for _, r := range set {
		switch {
		case r == rbacv1.ResourceAll, r == combined:
			return true
		case subresource != "" && strings.HasPrefix(r, "*/") && r[2:] == subresource:
			return true
		}
	}
	return false
}

// nonResourceURLMatches matches exact paths and prefixes ending in "*".
func nonResourceURLMatches(set []string, path string) bool {
	for _, u := range set {
		switch {
		case u == rbacv1.NonResourceAll, u == path:
			return true
		case strings.HasSuffix(u, "*") && strings.HasPrefix(path, u[:len(u)-1]):
			return true
		}
	}
	return false
}
