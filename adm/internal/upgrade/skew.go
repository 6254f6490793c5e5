// Package upgrade moves a node's control plane to another Trireme version as
// kubeadm's `upgrade plan|apply|node` does: the version skew policy, the plan
// of what changes, and the replacement of the static pods one at a time with
// a rollback of the node's manifests when one does not become healthy.
package upgrade

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Policy is the version skew policy apply enforces, quoted when it refuses.
const Policy = "version skew policy (as kubeadm's, https://kubernetes.io/releases/version-skew-policy/): " +
	"the control plane moves one minor version at a time; a downgrade goes back at most one minor version " +
	"and only with --force; a kubelet may not be newer than the apiserver nor more than 3 minor versions older"

// Version is a parsed vMAJOR.MINOR.PATCH[-suffix], as images are tagged.
type Version struct {
	Major, Minor, Patch int
	// Raw is the string it was parsed from: the image tag.
	Raw string
}

var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)([-+].*)?$`)

// ParseVersion parses a version as images and /version spell it.
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a version (vMAJOR.MINOR.PATCH)", s)
	}
	v := Version{Raw: s}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	return v, nil
}

func (v Version) String() string { return v.Raw }

// Compare orders versions by major, minor and patch; a suffix does not count.
func (v Version) Compare(o Version) int {
	for _, d := range [][2]int{{v.Major, o.Major}, {v.Minor, o.Minor}, {v.Patch, o.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// ErrSkew marks a refusal by the skew policy.
var ErrSkew = errors.New("refused by the " + Policy)

// CheckSkew applies the policy to moving the control plane from current to
// target with the kubelets at the versions given (node → version). force
// allows what upstream lets --force allow: a downgrade of one minor version
// and kubelets newer than the target.
func CheckSkew(current, target Version, kubelets map[string]Version, force bool) error {
	var problems []string
	switch {
	case target.Major != current.Major:
		problems = append(problems, fmt.Sprintf("%s to %s changes the major version", current, target))
	case target.Minor > current.Minor+1:
		problems = append(problems, fmt.Sprintf("%s is more than one minor version above %s; upgrade to v%d.%d first", target, current, current.Major, current.Minor+1))
	case target.Minor < current.Minor-1:
		problems = append(problems, fmt.Sprintf("%s is more than one minor version below %s", target, current))
	case target.Minor == current.Minor-1 && !force:
		problems = append(problems, fmt.Sprintf("%s is a downgrade across a minor version from %s (needs --force)", target, current))
	}
	nodes := make([]string, 0, len(kubelets))
	for n := range kubelets {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		if p := kubeletSkew(n, kubelets[n], target, force); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrSkew, strings.Join(problems, "; "))
	}
	return nil
}

// CheckKubelet applies the policy to node's kubelet moving to version
// kubelet under an apiserver at version apiserver: what `upgrade node`
// checks on a worker.
func CheckKubelet(node string, kubelet, apiserver Version) error {
	if p := kubeletSkew(node, kubelet, apiserver, false); p != "" {
		return fmt.Errorf("%w: %s", ErrSkew, p)
	}
	return nil
}

// kubeletSkew is the policy's objection to node's kubelet at version k under
// an apiserver at version a, or "".
func kubeletSkew(node string, k, a Version, force bool) string {
	switch {
	case k.Major != a.Major || k.Minor < a.Minor-3:
		return fmt.Sprintf("the kubelet of node %s (%s) would be more than 3 minor versions older than the apiserver at %s; upgrade it first", node, k, a)
	case k.Minor > a.Minor && !force:
		return fmt.Sprintf("the kubelet of node %s (%s) would be newer than the apiserver at %s (needs --force)", node, k, a)
	}
	return ""
}
