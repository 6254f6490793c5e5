package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Sources of the expected values below, all in kubernetes/kubernetes:
//   - pkg/apis/core/v1/defaults.go: SetDefaults_Pod, SetDefaults_PodSpec,
//     SetDefaults_Container, SetDefaults_Probe, SetDefaults_HTTPGetAction,
//     SetDefaults_ObjectFieldSelector, SetDefaults_ResourceList and the
//     volume source functions;
//   - pkg/apis/core/v1/zz_generated.defaults.go: the declarative defaults
//     of k8s.io/api (+default markers: ContainerPort.Protocol "TCP",
//     GRPCAction.Service "", FileKeySelector.Optional false).

// defaultedSpec is the pod spec defaults of SetDefaults_PodSpec applied to
// spec: ClusterFirst DNS, restart Always, an empty security context, 30s
// grace period, default-scheduler.
func defaultedSpec(spec corev1.PodSpec) corev1.PodSpec {
	spec.DNSPolicy = corev1.DNSClusterFirst
	spec.RestartPolicy = corev1.RestartPolicyAlways
	spec.SecurityContext = &corev1.PodSecurityContext{}
	spec.TerminationGracePeriodSeconds = new(int64(30))
	spec.SchedulerName = "default-scheduler"
	return spec
}

// defaultedPodSpec adds to defaultedSpec what only a Pod gets from
// SetDefaults_Pod: enableServiceLinks (DefaultEnableServiceLinks).
func defaultedPodSpec(spec corev1.PodSpec) corev1.PodSpec {
	spec = defaultedSpec(spec)
	spec.EnableServiceLinks = new(true)
	return spec
}

// defaultedContainer is a container named name running image with the
// SetDefaults_Container values and the given pull policy.
func defaultedContainer(name, image string, pull corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name:                     name,
		Image:                    image,
		ImagePullPolicy:          pull,
		TerminationMessagePath:   "/dev/termination-log", // TerminationMessagePathDefault
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
}

func TestPod(t *testing.T) {
	runDefaulting(t, Pod, []defaultingCase[corev1.Pod]{
		{
			name: "empty pod gets spec defaults and enableServiceLinks",
			in:   &corev1.Pod{},
			want: &corev1.Pod{Spec: defaultedPodSpec(corev1.PodSpec{})},
		},
		{
			name: "explicit values are kept",
			in: &corev1.Pod{Spec: corev1.PodSpec{
				DNSPolicy:                     corev1.DNSDefault,
				RestartPolicy:                 corev1.RestartPolicyNever,
				SecurityContext:               &corev1.PodSecurityContext{RunAsUser: new(int64(1000))},
				TerminationGracePeriodSeconds: new(int64(5)),
				SchedulerName:                 "custom",
				EnableServiceLinks:            new(false),
			}},
			want: &corev1.Pod{Spec: corev1.PodSpec{
				DNSPolicy:                     corev1.DNSDefault,
				RestartPolicy:                 corev1.RestartPolicyNever,
				SecurityContext:               &corev1.PodSecurityContext{RunAsUser: new(int64(1000))},
				TerminationGracePeriodSeconds: new(int64(5)),
				SchedulerName:                 "custom",
				EnableServiceLinks:            new(false),
			}},
		},
		{
			name: "containers of every kind get container defaults",
			in: &corev1.Pod{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1.36"}},
				Containers:     []corev1.Container{{Name: "app", Image: "nginx"}},
				EphemeralContainers: []corev1.EphemeralContainer{{
					EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox:latest"},
				}},
			}},
			want: &corev1.Pod{Spec: func() corev1.PodSpec {
				return defaultedPodSpec(corev1.PodSpec{
					// SetDefaults_Container: no tag means latest, so Always.
					InitContainers: []corev1.Container{defaultedContainer("init", "busybox:1.36", corev1.PullIfNotPresent)},
					Containers:     []corev1.Container{defaultedContainer("app", "nginx", corev1.PullAlways)},
					EphemeralContainers: []corev1.EphemeralContainer{{
						// SetDefaults_EphemeralContainer delegates to SetDefaults_Container.
						EphemeralContainerCommon: corev1.EphemeralContainerCommon(defaultedContainer("debug", "busybox:latest", corev1.PullAlways)),
					}},
				})
			}()},
		},
		{
			name: "limits become requests for regular and init containers only",
			in: &corev1.Pod{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Image: "i:1", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}}},
				Containers: []corev1.Container{{Name: "app", Image: "a:1", Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				}}},
			}},
			want: &corev1.Pod{Spec: func() corev1.PodSpec {
				initC := defaultedContainer("init", "i:1", corev1.PullIfNotPresent)
				initC.Resources = corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
					// SetDefaults_Pod: requests default to limits.
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}
				app := defaultedContainer("app", "a:1", corev1.PullIfNotPresent)
				app.Resources = corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					// An explicit request is kept; the missing memory one is copied.
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				}
				return defaultedPodSpec(corev1.PodSpec{InitContainers: []corev1.Container{initC}, Containers: []corev1.Container{app}})
			}()},
		},
		{
			name: "quantities round up to milli precision",
			in: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0001")},
			}}}, Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1.5u")}}},
			want: &corev1.Pod{Spec: func() corev1.PodSpec {
				app := defaultedContainer("app", "a:1", corev1.PullIfNotPresent)
				// SetDefaults_ResourceList: RoundUp(-3).
				app.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}
				return defaultedPodSpec(corev1.PodSpec{Containers: []corev1.Container{app}, Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}})
			}()},
		},
		{
			name: "host network pods expose container ports on the host",
			in: &corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{
				Name: "app", Image: "a:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP}},
			}}}},
			want: &corev1.Pod{Spec: func() corev1.PodSpec {
				app := defaultedContainer("app", "a:1", corev1.PullIfNotPresent)
				app.Ports = []corev1.ContainerPort{
					// defaultHostNetworkPorts; Protocol from ContainerPort +default="TCP".
					{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP},
					{ContainerPort: 53, HostPort: 5353, Protocol: corev1.ProtocolUDP},
				}
				return defaultedPodSpec(corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{app}})
			}()},
		},
		{
			name: "probes, hooks and env references",
			in: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app", Image: "a:1",
				Env: []corev1.EnvVar{
					{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
					{Name: "FILE", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "v", Path: "p", Key: "k"}}},
					{Name: "PLAIN", Value: "x"},
				},
				LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9090}}, PeriodSeconds: 3},
				StartupProbe:   &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}}},
				Lifecycle: &corev1.Lifecycle{
					PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/start", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTPS}},
					PreStop:   &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
				},
			}}}},
			want: &corev1.Pod{Spec: func() corev1.PodSpec {
				app := defaultedContainer("app", "a:1", corev1.PullIfNotPresent)
				app.Env = []corev1.EnvVar{
					// SetDefaults_ObjectFieldSelector: APIVersion "v1".
					{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}},
					// FileKeySelector.Optional +default=false.
					{Name: "FILE", ValueFrom: &corev1.EnvVarSource{FileKeyRef: &corev1.FileKeySelector{VolumeName: "v", Path: "p", Key: "k", Optional: new(false)}}},
					{Name: "PLAIN", Value: "x"},
				}
				// SetDefaults_Probe: timeout 1, period 10, success 1, failure 3.
				app.LivenessProbe = &corev1.Probe{
					// SetDefaults_HTTPGetAction: path "/", scheme HTTP.
					ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP}},
					TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
				}
				app.ReadinessProbe = &corev1.Probe{
					// GRPCAction.Service +default="".
					ProbeHandler:   corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9090, Service: new("")}},
					TimeoutSeconds: 1, PeriodSeconds: 3, SuccessThreshold: 1, FailureThreshold: 3,
				}
				app.StartupProbe = &corev1.Probe{
					ProbeHandler:   corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(1)}},
					TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
				}
				app.Lifecycle = &corev1.Lifecycle{
					PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/start", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTPS}},
					PreStop:   &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
				}
				return defaultedPodSpec(corev1.PodSpec{Containers: []corev1.Container{app}})
			}()},
		},
		{
			name: "status resource lists are rounded",
			in: &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
				Name:               "app",
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0001")},
			}}}},
			want: &corev1.Pod{
				Spec: defaultedPodSpec(corev1.PodSpec{}),
				// SetDefaults_ResourceList reaches every ResourceList of a Pod.
				Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
					Name:               "app",
					AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")},
				}}},
			},
		},
	})
}

func TestPodTemplate(t *testing.T) {
	runDefaulting(t, PodTemplate, []defaultingCase[corev1.PodTemplate]{
		{
			// SetObjectDefaults_PodTemplate calls SetDefaults_PodSpec but not
			// SetDefaults_Pod: no enableServiceLinks, no requests from limits.
			name: "template gets pod spec defaults only",
			in: &corev1.PodTemplate{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a:1", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				}}}},
			}},
			want: &corev1.PodTemplate{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec: func() corev1.PodSpec {
					app := defaultedContainer("app", "a:1", corev1.PullIfNotPresent)
					app.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
					return defaultedSpec(corev1.PodSpec{Containers: []corev1.Container{app}})
				}(),
			}},
		},
	})
}

func TestVolumes(t *testing.T) {
	// Each case is a pod template with the given volumes; the expected pod
	// spec is the defaulted spec with the expected volumes.
	cases := []struct {
		name string
		in   []corev1.Volume
		want []corev1.Volume
	}{
		{
			// SetDefaults_Volume: no source at all means an emptyDir.
			name: "volume without source becomes emptyDir",
			in:   []corev1.Volume{{Name: "scratch"}},
			want: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
		{
			// SetDefaults_SecretVolumeSource, SetDefaults_ConfigMapVolumeSource,
			// SetDefaults_DownwardAPIVolumeSource: DefaultMode 0644.
			name: "secret configMap and downwardAPI get mode 0644",
			in: []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: new(int32(0400))}}},
				{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
			},
			want: []corev1.Volume{
				{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: new(int32(0644))}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: new(int32(0400))}}},
				{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
					DefaultMode: new(int32(0644)),
					Items:       []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}}},
				}}},
			},
		},
		{
			// SetDefaults_ProjectedVolumeSource (0644) and
			// SetDefaults_ServiceAccountTokenProjection (one hour).
			name: "projected volume and service account token",
			in: []corev1.Volume{{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
			}}}}},
			want: []corev1.Volume{{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: new(int32(0644)), Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(int64(3600))}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "ns", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}},
			}}}}},
		},
		{
			// SetDefaults_HostPathVolumeSource: type "" (HostPathUnset).
			name: "hostPath gets an explicit empty type",
			in:   []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}}},
			want: []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log", Type: new(corev1.HostPathUnset)}}}},
		},
		{
			// SetDefaults_Volume with ImageVolume (on by default since 1.35):
			// pull policy from the tag, as for containers.
			name: "image volume pull policy",
			in: []corev1.Volume{
				{Name: "a", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "quay.io/x/model:latest"}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "quay.io/x/model:v1"}}},
			},
			want: []corev1.Volume{
				{Name: "a", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "quay.io/x/model:latest", PullPolicy: corev1.PullAlways}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "quay.io/x/model:v1", PullPolicy: corev1.PullIfNotPresent}}},
			},
		},
		{
			// SetDefaults_PersistentVolumeClaimSpec: volumeMode Filesystem.
			name: "ephemeral volume claim template",
			in: []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}},
			}}}}},
			want: []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: new(corev1.PersistentVolumeFilesystem)},
			}}}}},
		},
		{
			// +default markers of k8s.io/api on RBDVolumeSource, ISCSIVolumeSource,
			// AzureDiskVolumeSource and ScaleIOVolumeSource.
			name: "in-tree volume plugins",
			in: []corev1.Volume{
				{Name: "rbd", VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"m"}, RBDImage: "i"}}},
				{Name: "iscsi", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "t", IQN: "q"}}},
				{Name: "azure", VolumeSource: corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d", DataDiskURI: "u"}}},
				{Name: "scaleio", VolumeSource: corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{Gateway: "g", System: "s"}}},
			},
			want: []corev1.Volume{
				{Name: "rbd", VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{CephMonitors: []string{"m"}, RBDImage: "i", RBDPool: "rbd", RadosUser: "admin", Keyring: "/etc/ceph/keyring"}}},
				{Name: "iscsi", VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "t", IQN: "q", ISCSIInterface: "default"}}},
				{Name: "azure", VolumeSource: corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{
					DiskName: "d", DataDiskURI: "u", CachingMode: new(corev1.AzureDataDiskCachingReadWrite), FSType: new("ext4"), ReadOnly: new(false), Kind: new(corev1.AzureSharedBlobDisk),
				}}},
				{Name: "scaleio", VolumeSource: corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{Gateway: "g", System: "s", StorageMode: "ThinProvisioned", FSType: "xfs"}}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: tc.in}}}
			PodTemplate(got)
			want := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{Volumes: tc.want})}}
			assertSameJSON(t, got, want)
		})
	}
}
