package upgrade

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// State is what runs now, as plan and apply find it.
type State struct {
	// StaticPods maps this node's static pod components to their image.
	StaticPods map[string]string
	// APIServer is the apiserver's /version gitVersion.
	APIServer string
	// Kubelets maps node names to their kubelet's version.
	Kubelets map[string]string
	// Installable lists the versions whose images containerd holds.
	Installable []string
}

// Step is one static pod apply replaces.
type Step struct {
	Component, From, To string
}

// Plan is what apply would do to reach Target.
type Plan struct {
	Current, Target string
	Steps           []Step
	// Missing are the target's images containerd lacks: apply stops on them.
	Missing []string
	// Skew is the policy's verdict: nil when allowed.
	Skew error
}

// Tag returns an image reference's tag ("" without one).
func Tag(image string) string {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	return image[i+1:]
}

// WithTag returns image with its tag replaced by tag.
func WithTag(image, tag string) string {
	if t := Tag(image); t != "" {
		image = strings.TrimSuffix(image, ":"+t)
	}
	return image + ":" + tag
}

// MakePlan compares s with target. order lists the static pods in the order
// apply replaces them; present reports whether containerd holds an image
// among need (the images target needs).
func MakePlan(s State, order []string, target string, need []string, present func(string) bool, force bool) (Plan, error) {
	tv, err := ParseVersion(target)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Current: s.APIServer, Target: target}
	cv, err := ParseVersion(s.APIServer)
	if err != nil {
		return Plan{}, fmt.Errorf("the apiserver's version: %w", err)
	}
	kubelets := map[string]Version{}
	for n, k := range s.Kubelets {
		kv, err := ParseVersion(k)
		if err != nil {
			return Plan{}, fmt.Errorf("node %s: %w", n, err)
		}
		kubelets[n] = kv
	}
	p.Skew = CheckSkew(cv, tv, kubelets, force)
	for _, c := range order {
		img, ok := s.StaticPods[c]
		if !ok {
			continue
		}
		p.Steps = append(p.Steps, Step{Component: c, From: Tag(img), To: target})
	}
	for _, ref := range need {
		if !present(ref) {
			p.Missing = append(p.Missing, ref)
		}
	}
	return p, nil
}

// MissingError is the refusal of a target whose images containerd lacks.
func (p Plan) MissingError() error {
	if len(p.Missing) == 0 {
		return nil
	}
	return fmt.Errorf("containerd lacks %d image(s) of %s: %s; nothing was changed. Import them with "+
		"`triremeadm images import --dir DIR` (the `make images` output of that version)",
		len(p.Missing), p.Target, strings.Join(p.Missing, ", "))
}

// Print writes the plan as `triremeadm upgrade plan` shows it.
func (p Plan) Print(w io.Writer, s State) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Upgrade to %s (the apiserver runs %s)\n\n", p.Target, p.Current)
	fmt.Fprintln(tw, "COMPONENT\tCURRENT\tTARGET")
	for _, st := range p.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", st.Component, st.From, st.To)
	}
	nodes := make([]string, 0, len(s.Kubelets))
	for n := range s.Kubelets {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		fmt.Fprintf(tw, "kubelet on %s\t%s\t%s (`triremeadm upgrade node` there)\n", n, s.Kubelets[n], p.Target)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nInstallable versions (images in containerd): %s\n", strings.Join(s.Installable, ", "))
	switch {
	case p.Skew != nil:
		fmt.Fprintf(w, "Verdict: REFUSED: %v\n", p.Skew)
	case len(p.Missing) > 0:
		fmt.Fprintf(w, "Verdict: REFUSED: %v\n", p.MissingError())
	default:
		fmt.Fprintf(w, "Verdict: allowed. `triremeadm upgrade apply %s` backs up etcd and the manifests, renews the certificates "+
			"and replaces the static pods above one at a time.\n", p.Target)
	}
}
