package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestPodCreate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{"valid", func(p *corev1.Pod) {}, nil},
		{"containers required", func(p *corev1.Pod) { p.Spec.Containers = nil }, []want{required("spec.containers")}},
		{"container name required", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" }, []want{required("spec.containers[0].name")}},
		{"container name must be dns label", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "App_1" }, []want{invalid("spec.containers[0].name")}},
		{"container names unique across init and regular", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{validContainer("app")}
		}, []want{dup("spec.containers[0].name")}},
		{"image required", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, []want{required("spec.containers[0].image")}},
		{"image whitespace", func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" }, []want{invalid("spec.containers[0].image")}},
		{"containerPort required", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Protocol: corev1.ProtocolTCP}}
		}, []want{required("spec.containers[0].ports[0].containerPort")}},
		{"containerPort out of range", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 70000, Protocol: corev1.ProtocolTCP}}
		}, []want{invalid("spec.containers[0].ports[0].containerPort")}},
		{"port protocol enum", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "HTTP"}}
		}, []want{notSup("spec.containers[0].ports[0].protocol")}},
		{"port names unique and IANA", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{
				{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP},
				{Name: "http", ContainerPort: 81, Protocol: corev1.ProtocolTCP},
				{Name: "a_b", ContainerPort: 82, Protocol: corev1.ProtocolTCP},
			}
		}, []want{dup("spec.containers[0].ports[1].name"), invalid("spec.containers[0].ports[2].name")}},
		{"hostPort must match on host network", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		}, []want{invalid("spec.containers[0].ports[0].hostPort")}},
		{"env name required", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Value: "x"}}
		}, []want{required("spec.containers[0].env[0].name")}},
		{"env name with equals", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A=B"}}
		}, []want{invalid("spec.containers[0].env[0].name")}},
		{"env value and valueFrom", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
		}, []want{invalid("spec.containers[0].env[0].valueFrom")}},
		{"env fieldRef unsupported path", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.hostname"}}}}
		}, []want{notSup("spec.containers[0].env[0].valueFrom.fieldRef.fieldPath")}},
		{"env secretKeyRef key required", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}}}
		}, []want{required("spec.containers[0].env[0].valueFrom.secretKeyRef.key")}},
		{"env two sources", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef:    &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"},
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Key: "k"}}}}
		}, []want{invalid("spec.containers[0].env[0].valueFrom")}},
		{"envFrom needs a source", func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{Prefix: "P_"}}
		}, []want{invalid("spec.containers[0].envFrom[0]")}},
		{"request above limit", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: q("1")},
			}
		}, []want{invalid("spec.containers[0].resources.requests")}},
		{"negative quantity", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: q("-1Mi")}
		}, []want{invalid("spec.containers[0].resources.requests[memory]")}},
		{"unknown unprefixed resource", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"gpu": q("1")}
		}, []want{invalid("spec.containers[0].resources.limits[gpu]")}},
		{"extended resource must be whole and equal", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"example.com/gpu": q("500m")},
				Limits:   corev1.ResourceList{"example.com/gpu": q("1")},
			}
		}, []want{invalid("spec.containers[0].resources.requests[example.com/gpu]"), invalid("spec.containers[0].resources.requests")}},
		{"probe needs one handler", func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3, TimeoutSeconds: 1}
		}, []want{required("spec.containers[0].livenessProbe")}},
		{"probe with two handlers", func(p *corev1.Pod) {
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
				ProbeHandler: corev1.ProbeHandler{
					Exec:      &corev1.ExecAction{Command: []string{"true"}},
					TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)},
				},
				PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3, TimeoutSeconds: 1,
			}
		}, []want{forbidden("spec.containers[0].readinessProbe.tcpSocket")}},
		{"negative probe period and liveness success threshold", func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
				PeriodSeconds: -1, SuccessThreshold: 2, FailureThreshold: 3, TimeoutSeconds: 1,
			}
		}, []want{invalid("spec.containers[0].livenessProbe.periodSeconds"), invalid("spec.containers[0].livenessProbe.successThreshold")}},
		{"init container probe without sidecar", func(p *corev1.Pod) {
			c := validContainer("init")
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			p.Spec.InitContainers = []corev1.Container{c}
		}, []want{forbidden("spec.initContainers[0].readinessProbe")}},
		{"volumes unique with one source", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "none"},
				{Name: "two", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}},
			}
		}, []want{dup("spec.volumes[1].name"), required("spec.volumes[2]"), forbidden("spec.volumes[3].emptyDir")}},
		{"volume source fields", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: ptr[int32](01000)}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"},
					Items: []corev1.KeyToPath{{Key: "k", Path: "../etc"}}}}},
				{Name: "p", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}},
				{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/a/../b"}}},
			}
		}, []want{
			required("spec.volumes[0].secret.secretName"), invalid("spec.volumes[0].secret.defaultMode"),
			invalid("spec.volumes[1].configMap.items[0].path"), invalid("spec.volumes[1].configMap.items[0].path"),
			required("spec.volumes[2].persistentVolumeClaim.claimName"), invalid("spec.volumes[3].hostPath.path"),
		}},
		{"projected token expiry too short", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr[int64](60)}}},
			}}}}
		}, []want{invalid("spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds")}},
		{"pod certificate lifetime, key type and files", func(p *corev1.Pod) {
			cert := func(keyType string, lifetime int32, signer string, path string) corev1.VolumeProjection {
				return corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: signer, KeyType: keyType, MaxExpirationSeconds: ptr(lifetime), CredentialBundlePath: path}}
			}
			p.Spec.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				cert("ECDSAP256", 3600, "example.com/mesh", "ok.pem"),
				cert("ECDSAP256", 91*24*3600, "example.com/mesh", "longest.pem"),
				cert("ECDSAP256", 91*24*3600+1, "example.com/mesh", "too-long.pem"),
				cert("ECDSAP256", 3599, "example.com/mesh", "too-short.pem"),
				cert("ECDSAP256", 2*24*3600, "kubernetes.io/mesh", "kube.pem"),
				cert("DSA", 3600, "example.com/mesh", "dsa.pem"),
				cert("ED25519", 3600, "example.com/mesh", ""),
			}}}}}
		}, []want{
			invalid("spec.volumes[0].projected.sources[2].podCertificate.maxExpirationSeconds"),
			invalid("spec.volumes[0].projected.sources[3].podCertificate.maxExpirationSeconds"),
			invalid("spec.volumes[0].projected.sources[4].podCertificate.maxExpirationSeconds"),
			notSup("spec.volumes[0].projected.sources[5].podCertificate.keyType"),
			required("spec.volumes[0].projected.sources[6].podCertificate"),
		}},
		{"mount refers to missing volume", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "missing", MountPath: "/data"}}
		}, []want{notFound("spec.containers[0].volumeMounts[0].name")}},
		{"mountPath required and unique", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "d"}, {Name: "d", MountPath: "/x"}, {Name: "d", MountPath: "/x"}}
		}, []want{required("spec.containers[0].volumeMounts[0].mountPath"), invalid("spec.containers[0].volumeMounts[2].mountPath")}},
		{"subPath escaping", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "d", MountPath: "/x", SubPath: "../y"}}
		}, []want{invalid("spec.containers[0].volumeMounts[0].subPath")}},
		{"restartPolicy enum", func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, []want{notSup("spec.restartPolicy")}},
		{"dnsPolicy required", func(p *corev1.Pod) { p.Spec.DNSPolicy = "" }, []want{required("spec.dnsPolicy")}},
		{"dnsPolicy None needs nameservers", func(p *corev1.Pod) {
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{}
		}, []want{required("spec.dnsConfig.nameservers")}},
		{"imagePullPolicy enum", func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" }, []want{notSup("spec.containers[0].imagePullPolicy")}},
		{"negative grace period", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr[int64](-1) }, []want{invalid("spec.terminationGracePeriodSeconds")}},
		{"activeDeadlineSeconds zero", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr[int64](0) }, []want{invalid("spec.activeDeadlineSeconds")}},
		{"security context basics", func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr[int64](-1), Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn"}, {Name: "net.core.somaxconn"}}}
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true), AllowPrivilegeEscalation: ptr(false),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}
		}, []want{
			invalid("spec.securityContext.runAsUser"), dup("spec.securityContext.sysctls[1].name"),
			invalid("spec.containers[0].securityContext"), required("spec.containers[0].securityContext.seccompProfile.localhostProfile"),
		}},
		{"nodeSelector labels", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"bad key!": "x"} }, []want{invalid("spec.nodeSelector")}},
		{"tolerations rules", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{
				{Operator: corev1.TolerationOpEqual, Value: "x"},
				{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"},
				{Key: "k", Operator: "In"},
				{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr[int64](5)},
				{Key: "k", Operator: corev1.TolerationOpExists, Effect: "Never"},
			}
		}, []want{
			invalid("spec.tolerations[0].operator"), invalid("spec.tolerations[1].operator"), notSup("spec.tolerations[2].operator"),
			invalid("spec.tolerations[3].effect"), notSup("spec.tolerations[4].effect"),
		}},
		{"affinity basics", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{},
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 0, Preference: corev1.NodeSelectorTerm{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn}},
					}}},
				},
				PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{}}},
			}
		}, []want{
			required("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"),
			invalid("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"),
			required("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values"),
			required("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
		}},
		{"topology spread", func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: "zone", WhenUnsatisfiable: "Maybe"}}
		}, []want{invalid("spec.topologySpreadConstraints[0].maxSkew"), notSup("spec.topologySpreadConstraints[0].whenUnsatisfiable")}},
		{"ephemeral containers only via subresource", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon(validContainer("debug"))}}
		}, []want{forbidden("spec.ephemeralContainers")}},
		{"nodeName with scheduling gates", func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
		}, []want{forbidden("spec.nodeName")}},
		{"mirror pod needs nodeName", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}, []want{invalid("metadata.annotations[kubernetes.io/config.mirror]")}},
		{"resource claim references", func(p *corev1.Pod) {
			p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr("gpu-template")}}
			p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}, {Name: "tpu"}}
		}, []want{notFound("spec.containers[0].resources.claims[1].name")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := validPod()
			tc.mutate(p)
			expectErrs(t, ValidateCreate(p), tc.want...)
		})
	}
}

func TestPodUpdate(t *testing.T) {
	base := func() *corev1.Pod {
		p := validPod()
		stored(&p.ObjectMeta)
		p.Spec.NodeName = "node-1"
		p.Spec.ActiveDeadlineSeconds = ptr[int64](100)
		p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr[int64](60)}}
		return p
	}
	cases := []struct {
		name   string
		mutate func(p, old *corev1.Pod)
		want   []want
	}{
		{"no change", func(p, old *corev1.Pod) {}, nil},
		{"image change allowed", func(p, old *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }, nil},
		{"image cleared", func(p, old *corev1.Pod) { p.Spec.Containers[0].Image = "" }, []want{required("spec.containers[0].image")}},
		{"deadline decrease allowed", func(p, old *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr[int64](50) }, nil},
		{"deadline increase rejected", func(p, old *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr[int64](500) }, []want{invalid("spec.activeDeadlineSeconds")}},
		{"deadline removal rejected", func(p, old *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = nil }, []want{invalid("spec.activeDeadlineSeconds")}},
		{"toleration added", func(p, old *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists})
		}, nil},
		{"toleration seconds changed", func(p, old *corev1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = ptr[int64](10) }, nil},
		{"toleration removed", func(p, old *corev1.Pod) { p.Spec.Tolerations = nil }, []want{forbidden("spec.tolerations")}},
		{"container added", func(p, old *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, validContainer("second"))
		}, []want{forbidden("spec.containers")}},
		{"other field changed", func(p, old *corev1.Pod) { p.Spec.Containers[0].Args = []string{"-v"} }, []want{forbidden("spec")}},
		{"grace period from negative to 1", func(p, old *corev1.Pod) {
			old.Spec.TerminationGracePeriodSeconds = ptr[int64](-1)
			p.Spec.TerminationGracePeriodSeconds = ptr[int64](1)
		}, nil},
		{"scheduling gate removed", func(p, old *corev1.Pod) {
			old.Spec.NodeName, p.Spec.NodeName = "", ""
			old.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/a"}}
		}, nil},
		{"scheduling gate added", func(p, old *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/a"}}
		}, []want{forbidden("spec.schedulingGates")}},
		{"gated pod may add node selector", func(p, old *corev1.Pod) {
			old.Spec.NodeName, p.Spec.NodeName = "", ""
			old.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/a"}}
			p.Spec.SchedulingGates = old.Spec.SchedulingGates
			p.Spec.NodeSelector = map[string]string{"zone": "a"}
		}, nil},
		{"mirror annotation may not be added", func(p, old *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}, []want{forbidden("metadata.annotations[kubernetes.io/config.mirror]")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := base()
			p := base()
			tc.mutate(p, old)
			expectErrs(t, ValidateUpdate(p, old), tc.want...)
		})
	}
	t.Run("message names the updatable fields", func(t *testing.T) {
		old, p := base(), base()
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		errs := ValidateUpdate(p, old)
		expectDetail(t, errs, "spec", "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")
		expectDetail(t, errs, "spec", "spec.restartPolicy")
	})
}

func TestPodStatusUpdate(t *testing.T) {
	base := func() *corev1.Pod {
		p := validPod()
		stored(&p.ObjectMeta)
		p.Spec.NodeName = "node-1"
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Status.QOSClass = corev1.PodQOSBestEffort
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}}}
		return p
	}
	cases := []struct {
		name   string
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{"valid", func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}} }, nil},
		{"nodeName may not move", func(p *corev1.Pod) { p.Spec.NodeName = "node-2" }, []want{forbidden("status.nodeName")}},
		{"qos immutable", func(p *corev1.Pod) { p.Status.QOSClass = corev1.PodQOSGuaranteed }, []want{invalid("status.qosClass")}},
		{"terminated container may not run again", func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		}, []want{forbidden("status.containerStatuses[0].state")}},
		{"two IPs of one family", func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}} }, []want{invalid("status.podIPs")}},
		{"bad IP", func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.300"}} }, []want{invalid("status.podIPs[0]")}},
		{"custom condition must be qualified", func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: "bad type", Status: corev1.ConditionTrue}}
		}, []want{invalid("status.conditions[0].type")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, p := base(), base()
			tc.mutate(p)
			expectErrs(t, ValidateStatusUpdate(p, old), tc.want...)
		})
	}
}

func TestPodTemplateKind(t *testing.T) {
	tpl := &corev1.PodTemplate{ObjectMeta: meta("t"), Template: validTemplate(map[string]string{"app": "x"})}
	expectErrs(t, ValidateCreate(tpl))
	tpl.Template.Spec.Containers[0].Name = strings.Repeat("a", 64)
	expectErrs(t, ValidateCreate(tpl), invalid("template.spec.containers[0].name"))
}

func TestPodEphemeralContainersUpdate(t *testing.T) {
	old := validPod()
	stored(&old.ObjectMeta)
	debug := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(validContainer("debug")), TargetContainerName: "app"}
	t.Run("add", func(t *testing.T) {
		p := old.DeepCopy()
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{debug}
		expectErrs(t, ValidatePodEphemeralContainersUpdate(p, old))
	})
	t.Run("bad target and ports", func(t *testing.T) {
		p := old.DeepCopy()
		d := *debug.DeepCopy()
		d.TargetContainerName = "nope"
		d.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{d}
		expectErrs(t, ValidatePodEphemeralContainersUpdate(p, old), notFound("spec.ephemeralContainers[0].targetContainerName"), forbidden("spec.ephemeralContainers[0].ports"))
	})
	t.Run("remove", func(t *testing.T) {
		withDebug := old.DeepCopy()
		withDebug.Spec.EphemeralContainers = []corev1.EphemeralContainer{debug}
		expectErrs(t, ValidatePodEphemeralContainersUpdate(old.DeepCopy(), withDebug), forbidden("spec.ephemeralContainers"))
	})
	t.Run("binding", func(t *testing.T) {
		expectErrs(t, ValidatePodBinding(&corev1.Binding{Target: corev1.ObjectReference{Kind: "Pod"}}), notSup("target.kind"), required("target.name"))
	})
}

func TestPodResize(t *testing.T) {
	burstable := func() *corev1.Pod {
		p := validPod()
		stored(&p.ObjectMeta)
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("20m"), corev1.ResourceMemory: q("35Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("30m")},
		}
		return p
	}
	cases := []struct {
		name   string
		old    func(p *corev1.Pod)
		mutate func(p *corev1.Pod)
		want   []want
	}{
		{"cpu and memory change", nil, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = q("25m")
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = q("50Mi")
		}, nil},
		{"qos class may not change", nil, func(p *corev1.Pod) {
			r := &p.Spec.Containers[0].Resources
			r.Requests[corev1.ResourceCPU] = q("30m")
			r.Limits[corev1.ResourceMemory] = q("35Mi")
		}, []want{invalid("spec")}},
		{"requests cannot be removed", nil, func(p *corev1.Pod) {
			delete(p.Spec.Containers[0].Resources.Requests, corev1.ResourceMemory)
		}, []want{forbidden("spec.containers[0].resources.requests")}},
		{"limits cannot be removed", nil, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = nil
		}, []want{forbidden("spec.containers[0].resources.limits")}},
		{"only cpu and memory", nil, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = q("1Gi")
		}, []want{forbidden("spec")}},
		{"resize policy is immutable", nil, func(p *corev1.Pod) {
			p.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
		}, []want{forbidden("spec")}},
		{"containers may not be renamed", nil, func(p *corev1.Pod) {
			p.Spec.Containers[0].Name = "other"
		}, []want{forbidden("spec.containers[0].name")}},
		{"containers may not be added", nil, func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, validContainer("second"))
		}, []want{forbidden("spec.containers")}},
		{"non-sidecar init container with RestartContainer", func(p *corev1.Pod) {
			c := validContainer("init")
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: q("10m")}
			c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.RestartContainer}}
			p.Spec.InitContainers = []corev1.Container{c}
		}, func(p *corev1.Pod) {
			p.Spec.InitContainers[0].Resources.Requests[corev1.ResourceCPU] = q("20m")
		}, []want{forbidden("spec.initContainers[0]")}},
		{"static pods cannot be resized", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
			p.Spec.NodeName = "n1"
		}, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = q("25m")
		}, []want{forbidden("[]")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := burstable()
			if tc.old != nil {
				tc.old(old)
			}
			p := old.DeepCopy()
			tc.mutate(p)
			expectErrs(t, ValidatePodResize(p, old), tc.want...)
		})
	}
}
