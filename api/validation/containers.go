package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podContext carries what container checks need to know about the pod
// around them.
type podContext struct {
	spec       *corev1.PodSpec
	volumes    map[string]corev1.VolumeSource
	claimNames sets.Set[string]
	names      sets.Set[string] // container names seen so far, all kinds
}

var supportedPullPolicies = []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}
var supportedTerminationMessagePolicies = []corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}

// containerCommon checks the fields every container kind shares.
func (pc *podContext) containerCommon(c *corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	namePath := fldPath.Child("name")
	if c.Name == "" {
		errs = append(errs, field.Required(namePath, ""))
	} else {
		errs = append(errs, dns1123Label(c.Name, namePath)...)
		if pc.names.Has(c.Name) {
			errs = append(errs, field.Duplicate(namePath, c.Name))
		}
		pc.names.Insert(c.Name)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(fldPath.Child("image"), ""))
	}
	errs = append(errs, containerPorts(c.Ports, fldPath.Child("ports"))...)
	errs = append(errs, envVars(c.Env, fldPath.Child("env"))...)
	errs = append(errs, envFrom(c.EnvFrom, fldPath.Child("envFrom"))...)
	errs = append(errs, pc.volumeMounts(c.VolumeMounts, c.VolumeDevices, fldPath)...)
	errs = append(errs, enum(c.ImagePullPolicy, fldPath.Child("imagePullPolicy"), supportedPullPolicies...)...)
	errs = append(errs, enum(c.TerminationMessagePolicy, fldPath.Child("terminationMessagePolicy"), supportedTerminationMessagePolicies...)...)
	errs = append(errs, pc.resources(&c.Resources, fldPath.Child("resources"))...)
	errs = append(errs, resizePolicy(c.ResizePolicy, fldPath.Child("resizePolicy"))...)
	errs = append(errs, securityContext(c.SecurityContext, fldPath.Child("securityContext"))...)
	return errs
}

var containerRestartPolicies = []corev1.ContainerRestartPolicy{corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyOnFailure, corev1.ContainerRestartPolicyNever}

// containers checks the regular containers of a pod.
func (pc *podContext) containers(cs []corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(cs) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	for i := range cs {
		c, p := &cs[i], fldPath.Index(i)
		errs = append(errs, pc.containerCommon(c, p)...)
		errs = append(errs, lifecycle(c.Lifecycle, p.Child("lifecycle"))...)
		errs = append(errs, probe(c.LivenessProbe, p.Child("livenessProbe"), true)...)
		errs = append(errs, probe(c.ReadinessProbe, p.Child("readinessProbe"), false)...)
		errs = append(errs, probe(c.StartupProbe, p.Child("startupProbe"), true)...)
		if c.RestartPolicy != nil {
			errs = append(errs, enum(*c.RestartPolicy, p.Child("restartPolicy"), containerRestartPolicies...)...)
		}
		errs = append(errs, restartRules(c.RestartPolicyRules, c.RestartPolicy, p)...)
	}
	return errs
}

// initContainers checks init containers; only restartable ("sidecar") init
// containers may have probes and lifecycle hooks.
func (pc *podContext) initContainers(cs []corev1.Container, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range cs {
		c, p := &cs[i], fldPath.Index(i)
		errs = append(errs, pc.containerCommon(c, p)...)
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if c.RestartPolicy != nil {
			errs = append(errs, enum(*c.RestartPolicy, p.Child("restartPolicy"), containerRestartPolicies...)...)
		}
		errs = append(errs, restartRules(c.RestartPolicyRules, c.RestartPolicy, p)...)
		if sidecar {
			errs = append(errs, lifecycle(c.Lifecycle, p.Child("lifecycle"))...)
			errs = append(errs, probe(c.LivenessProbe, p.Child("livenessProbe"), true)...)
			errs = append(errs, probe(c.ReadinessProbe, p.Child("readinessProbe"), false)...)
			errs = append(errs, probe(c.StartupProbe, p.Child("startupProbe"), true)...)
			continue
		}
		const msg = "may not be set for init containers without restartPolicy=Always"
		if c.Lifecycle != nil {
			errs = append(errs, field.Forbidden(p.Child("lifecycle"), msg))
		}
		if c.LivenessProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("livenessProbe"), msg))
		}
		if c.ReadinessProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("readinessProbe"), msg))
		}
		if c.StartupProbe != nil {
			errs = append(errs, field.Forbidden(p.Child("startupProbe"), msg))
		}
	}
	return errs
}

// ephemeralContainers checks debug containers; they may not declare what
// only makes sense for containers planned with the pod.
func (pc *podContext) ephemeralContainers(cs []corev1.EphemeralContainer, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range cs {
		ec, p := &cs[i], fldPath.Index(i)
		c := corev1.Container(ec.EphemeralContainerCommon)
		errs = append(errs, pc.containerCommon(&c, p)...)
		forbidden := map[string]bool{
			"ports": len(c.Ports) > 0, "resources": len(c.Resources.Limits)+len(c.Resources.Requests)+len(c.Resources.Claims) > 0,
			"lifecycle": c.Lifecycle != nil, "livenessProbe": c.LivenessProbe != nil, "readinessProbe": c.ReadinessProbe != nil,
			"startupProbe": c.StartupProbe != nil, "restartPolicy": c.RestartPolicy != nil, "resizePolicy": len(c.ResizePolicy) > 0,
		}
		for _, f := range []string{"ports", "resources", "resizePolicy", "lifecycle", "livenessProbe", "readinessProbe", "startupProbe", "restartPolicy"} {
			if forbidden[f] {
				errs = append(errs, field.Forbidden(p.Child(f), "cannot be set for an Ephemeral Container"))
			}
		}
		for j, m := range c.VolumeMounts {
			if m.SubPath != "" {
				errs = append(errs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
		}
		if ec.TargetContainerName != "" && !pc.nonEphemeral(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(p.Child("targetContainerName"), ec.TargetContainerName))
		}
	}
	return errs
}

func (pc *podContext) nonEphemeral(name string) bool {
	for _, c := range pc.spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range pc.spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

var supportedProtocols = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}

func containerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		p := fldPath.Index(i)
		if port.Name != "" {
			errs = append(errs, each(p.Child("name"), port.Name, validation.IsValidPortName(port.Name))...)
			if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(p.Child("containerPort"), ""))
		} else {
			errs = append(errs, portNum(port.ContainerPort, p.Child("containerPort"))...)
		}
		if port.HostPort != 0 {
			errs = append(errs, portNum(port.HostPort, p.Child("hostPort"))...)
		}
		errs = append(errs, enum(port.Protocol, p.Child("protocol"), supportedProtocols...)...)
		if port.HostIP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(p.Child("hostIP"), port.HostIP, true, nil)...)
		}
	}
	return errs
}

// hostNetworkPorts enforces that a pod on the host network declares host
// ports equal to its container ports, since no translation happens there.
func hostNetworkPorts(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	check := func(cs []corev1.Container, p *field.Path) {
		for i, c := range cs {
			for j, port := range c.Ports {
				if port.HostPort != 0 && port.HostPort != port.ContainerPort {
					errs = append(errs, field.Invalid(p.Index(i).Child("ports").Index(j).Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
				}
			}
		}
	}
	check(spec.Containers, fldPath.Child("containers"))
	check(spec.InitContainers, fldPath.Child("initContainers"))
	return errs
}

var supportedResizeResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}
var supportedResizeRestartPolicies = []corev1.ResourceResizeRestartPolicy{corev1.NotRequired, corev1.RestartContainer}

func resizePolicy(policies []corev1.ContainerResizePolicy, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, p := range policies {
		errs = append(errs, enum(p.ResourceName, fldPath.Index(i).Child("resourceName"), supportedResizeResources...)...)
		if seen.Has(p.ResourceName) {
			errs = append(errs, field.Duplicate(fldPath.Index(i).Child("resourceName"), p.ResourceName))
		}
		seen.Insert(p.ResourceName)
		errs = append(errs, enum(p.RestartPolicy, fldPath.Index(i).Child("restartPolicy"), supportedResizeRestartPolicies...)...)
	}
	return errs
}

var restartRuleOperators = []corev1.ContainerRestartRuleOnExitCodesOperator{corev1.ContainerRestartRuleOnExitCodesOpIn, corev1.ContainerRestartRuleOnExitCodesOpNotIn}

// restartRules checks a container's restartPolicyRules; fldPath is the container.
func restartRules(rules []corev1.ContainerRestartRule, policy *corev1.ContainerRestartPolicy, fldPath *field.Path) field.ErrorList {
	if len(rules) == 0 {
		return nil
	}
	var errs field.ErrorList
	if policy == nil {
		errs = append(errs, field.Required(fldPath.Child("restartPolicy"), "must be specified when restartPolicyRules are used"))
	}
	fldPath = fldPath.Child("restartPolicyRules")
	for i, r := range rules {
		p := fldPath.Index(i)
		errs = append(errs, enum(r.Action, p.Child("action"), corev1.ContainerRestartRuleActionRestart)...)
		if r.ExitCodes == nil {
			errs = append(errs, field.Required(p.Child("exitCodes"), "must be specified"))
			continue
		}
		errs = append(errs, enum(r.ExitCodes.Operator, p.Child("exitCodes", "operator"), restartRuleOperators...)...)
		if len(r.ExitCodes.Values) > 255 {
			errs = append(errs, field.TooMany(p.Child("exitCodes", "values"), len(r.ExitCodes.Values), 255))
		}
	}
	return errs
}

// podImageWhitespace rejects images padded with spaces. Upstream checks
// this on pods only: some templates use " " as a placeholder image.
func podImageWhitespace(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(image string, p *field.Path) {
		if len(strings.TrimSpace(image)) != len(image) {
			errs = append(errs, field.Invalid(p, image, "must not have leading or trailing whitespace"))
		}
	}
	for i, c := range spec.Containers {
		check(c.Image, fldPath.Child("containers").Index(i).Child("image"))
	}
	for i, c := range spec.InitContainers {
		check(c.Image, fldPath.Child("initContainers").Index(i).Child("image"))
	}
	for i, c := range spec.EphemeralContainers {
		check(c.Image, fldPath.Child("ephemeralContainers").Index(i).Child("image"))
	}
	return errs
}

// hostPortConflicts rejects two containers claiming the same host port,
// protocol and address, which the kubelet could never satisfy.
func hostPortConflicts(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	check := func(cs []corev1.Container, p *field.Path) {
		for i, c := range cs {
			for j, port := range c.Ports {
				if port.HostPort == 0 {
					continue
				}
				key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
				if seen.Has(key) {
					errs = append(errs, field.Duplicate(p.Index(i).Child("ports").Index(j).Child("hostPort"), key))
				}
				seen.Insert(key)
			}
		}
	}
	check(spec.InitContainers, fldPath.Child("initContainers"))
	check(spec.Containers, fldPath.Child("containers"))
	return errs
}
