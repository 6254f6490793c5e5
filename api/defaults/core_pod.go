package defaults

import (
	corev1 "k8s.io/api/core/v1"
)

// Pod sets the defaults kube-apiserver applies to a Pod. On top of the pod
// spec defaults every template gets, a Pod alone gets requests copied from
// limits, enableServiceLinks and, on the host network, host ports: upstream
// keeps these out of templates so that an upgrade does not change the
// templates of existing workloads and roll them. Pod-level resources are
// completed later, by PodLevelResources.
func Pod(p *corev1.Pod) {
	for i := range p.Spec.Containers {
		requestsFromLimits(&p.Spec.Containers[i].Resources)
	}
	for i := range p.Spec.InitContainers {
		requestsFromLimits(&p.Spec.InitContainers[i].Resources)
	}
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = new(corev1.DefaultEnableServiceLinks)
	}
	if p.Spec.HostNetwork {
		hostPortsFromContainerPorts(p.Spec.Containers)
		hostPortsFromContainerPorts(p.Spec.InitContainers)
	}
	podSpec(&p.Spec)
	podStatus(&p.Status)
}

// PodTemplate sets the defaults of a core/v1 PodTemplate: those of its pod
// spec only.
func PodTemplate(t *corev1.PodTemplate) {
	podTemplateSpec(&t.Template)
}

// podTemplateSpec defaults the template embedded in a workload.
func podTemplateSpec(t *corev1.PodTemplateSpec) {
	podSpec(&t.Spec)
}

// requestsFromLimits makes a container without a request for a resource
// request what it is limited to. Ephemeral containers are left out, as
// upstream does: they cannot declare resources.
func requestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

// hostPortsFromContainerPorts exposes each container port on the same host
// port, which is what a host-network pod does anyway.
func hostPortsFromContainerPorts(containers []corev1.Container) {
	for i := range containers {
		for j := range containers[i].Ports {
			port := &containers[i].Ports[j]
			if port.HostPort == 0 {
				port.HostPort = port.ContainerPort
			}
		}
	}
}

// podSpec sets the defaults shared by Pods and every pod template. Upstream
// froze this list (kubernetes#69445): a new default here would change all
// stored templates; new ones go to Pod.
func podSpec(s *corev1.PodSpec) {
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = new(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range s.Volumes {
		volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		container(&s.Containers[i])
	}
	for i := range s.EphemeralContainers {
		// EphemeralContainerCommon mirrors Container field for field, so the
		// same defaults apply through a conversion.
		container((*corev1.Container)(&s.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundResourceList(&s.Overhead)
	if s.Resources != nil {
		roundRequirements(s.Resources)
	}
}

// container sets the defaults of one container of any kind.
func container(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		envVarSource(c.Env[i].ValueFrom)
	}
	roundRequirements(&c.Resources)
	probe(c.LivenessProbe)
	probe(c.ReadinessProbe)
	probe(c.StartupProbe)
	if c.Lifecycle != nil {
		lifecycleHandler(c.Lifecycle.PostStart)
		lifecycleHandler(c.Lifecycle.PreStop)
	}
}

// envVarSource defaults the references an environment variable reads from.
func envVarSource(src *corev1.EnvVarSource) {
	if src == nil {
		return
	}
	objectFieldSelector(src.FieldRef)
	if src.FileKeyRef != nil && src.FileKeyRef.Optional == nil {
		// Declared in k8s.io/api as +default=false.
		src.FileKeyRef.Optional = new(false)
	}
}

// objectFieldSelector pins a field reference to the core API version, the
// only one pod fields are read from.
func objectFieldSelector(f *corev1.ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

// probe fills the timing and threshold defaults of a probe and of its
// handler.
func probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	httpGetAction(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		// Declared in k8s.io/api as +default="": the empty service name asks
		// for the health of the whole server.
		p.GRPC.Service = new("")
	}
}

// lifecycleHandler defaults a postStart or preStop hook.
func lifecycleHandler(h *corev1.LifecycleHandler) {
	if h != nil {
		httpGetAction(h.HTTPGet)
	}
}

// httpGetAction defaults an HTTP probe or hook to plain HTTP on "/".
func httpGetAction(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

// podStatus rounds the resource lists a kubelet reports, as upstream's
// generated defaulter reaches every ResourceList of a Pod.
func podStatus(s *corev1.PodStatus) {
	roundResourceList(&s.AllocatedResources)
	if s.Resources != nil {
		roundRequirements(s.Resources)
	}
	for _, statuses := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range statuses {
			roundResourceList(&statuses[i].AllocatedResources)
			if statuses[i].Resources != nil {
				roundRequirements(statuses[i].Resources)
			}
		}
	}
}
