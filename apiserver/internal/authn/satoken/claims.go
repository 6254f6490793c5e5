package satoken

import (
	"strings"

	"github.com/go-jose/go-jose/v4/jwt"
)

// SubjectPrefix starts the user name of every service account.
const SubjectPrefix = "system:serviceaccount:"

// Subject is the user name (and JWT subject) of a service account.
func Subject(namespace, name string) string {
	return SubjectPrefix + namespace + ":" + name
}

// splitSubject reverses Subject; ok is false for any other string.
func splitSubject(sub string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(sub, SubjectPrefix)
	if !found {
		return "", "", false
	}
	namespace, name, found = strings.Cut(rest, ":")
	if !found || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}

// ObjectRef names an object a token is tied to, by name and UID so that a
// recreated object of the same name does not revive the token.
type ObjectRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// kubernetesClaims is the private "kubernetes.io" claim. Its JSON shape is
// what upstream tokens carry, so tools that decode tokens keep working.
type kubernetesClaims struct {
	Namespace      string     `json:"namespace"`
	ServiceAccount ObjectRef  `json:"serviceaccount"`
	Pod            *ObjectRef `json:"pod,omitempty"`
	Secret         *ObjectRef `json:"secret,omitempty"`
	Node           *ObjectRef `json:"node,omitempty"`
}

// privateClaims wraps the kubernetes.io claim as the JWT body's member.
type privateClaims struct {
	Kubernetes *kubernetesClaims `json:"kubernetes.io,omitempty"`
}

// tokenClaims are the public (registered) and private claims together.
type tokenClaims struct {
	jwt.Claims
	privateClaims
}
