package defaults

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// pullPolicy is the pull policy an image reference gets when none is set:
// Always for the moving "latest" tag (named or implied by the absence of
// both tag and digest), IfNotPresent otherwise. A reference that does not
// parse also gets IfNotPresent, as upstream ignores the error here and lets
// validation report it.
func pullPolicy(image string) corev1.PullPolicy {
	if tag, ok := imageTag(image); ok && tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// The grammar of a container image reference, as the container tools define
// it (github.com/distribution/reference):
//
//	reference := name [ ":" tag ] [ "@" digest ]
//	name      := [ domain "/" ] path
//	domain    := host [ ":" port ]
//	path      := component [ "/" component ]*
const (
	pathComponentPat = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	domainLabelPat   = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	hostPat          = `(?:` + domainLabelPat + `(?:\.` + domainLabelPat + `)*|\[[a-fA-F0-9:]+\])`
	domainPat        = hostPat + `(?::[0-9]+)?`
	namePat          = `(?:` + domainPat + `/)?` + pathComponentPat + `(?:/` + pathComponentPat + `)*`
	tagPat           = `[\w][\w.-]{0,127}`
	digestPat        = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[[:xdigit:]]{32,}`

	// maxNameLength bounds the name part (domain and path) of a reference.
	maxNameLength = 255
)

var (
	referenceRE = regexp.MustCompile(`^(` + namePat + `)(?::(` + tagPat + `))?(?:@(` + digestPat + `))?$`)
	// hexIDRE matches a bare image ID, which is not a name.
	hexIDRE = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// digestHexLength is the encoded length of each digest algorithm image
	// tools accept; any other algorithm makes the reference invalid.
	digestHexLength = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}
	lowerHexRE      = regexp.MustCompile(`^[a-f0-9]+$`)
)

// imageTag returns the tag image refers to once normalized the way kubelets
// and container runtimes read it: "latest" when neither tag nor digest is
// given, "" when only a digest is. ok is false when image is not a valid
// reference.
func imageTag(image string) (tag string, ok bool) {
	if hexIDRE.MatchString(image) {
		return "", false
	}
	domain, rest := splitDomain(image)
	repo, _, _ := strings.Cut(rest, ":")
	if strings.ToLower(repo) != repo {
		return "", false
	}
	m := referenceRE.FindStringSubmatch(domain + "/" + rest)
	if m == nil || len(m[1]) > maxNameLength {
		return "", false
	}
	tag, digest := m[2], m[3]
	if digest != "" && !validDigest(digest) {
		return "", false
	}
	if tag == "" && digest == "" {
		tag = "latest"
	}
	return tag, true
}

// splitDomain separates the registry from the rest of a reference, filling
// in Docker Hub (and its "library/" namespace for single-component names)
// when the first component cannot be a registry: registries contain a dot or
// a port, are "localhost", or have capitals, which repository paths may not.
func splitDomain(image string) (domain, rest string) {
	first, after, found := strings.Cut(image, "/")
	switch {
	case !found:
		return "docker.io", "library/" + image
	case first == "localhost", strings.ContainsAny(first, ".:"), strings.ToLower(first) != first:
		domain, rest = first, after
	default:
		domain, rest = "docker.io", image
	}
	if first == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	return domain, rest
}

// validDigest reports whether d names a supported algorithm with an encoded
// value of the right length in lower-case hex.
func validDigest(d string) bool {
	alg, hex, _ := strings.Cut(d, ":")
	n, ok := digestHexLength[alg]
	return ok && len(hex) == n && lowerHexRE.MatchString(hex)
}
