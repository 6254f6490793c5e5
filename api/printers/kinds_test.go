package printers

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"trireme.dev/api/events"
)

// objMeta is the metadata of test objects: created five minutes before now.
func objMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: ago(5 * time.Minute)}
}

func withAnnotations(m metav1.ObjectMeta, kv ...string) metav1.ObjectMeta {
	m.Annotations = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Annotations[kv[i]] = kv[i+1]
	}
	return m
}

func template(names ...string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: containers(names...)},
	}
}

var selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

// TestKindCells checks every cell, wide ones included, of one object of
// each kind against what upstream's printers show for it.
func TestKindCells(t *testing.T) {
	q := resource.MustParse
	tests := []struct {
		name string
		obj  runtime.Object
		want []any
	}{
		{"podtemplate", &corev1.PodTemplate{ObjectMeta: objMeta("t"), Template: template("a", "b")},
			[]any{"t", "a,b", "a:1,b:1", "app=web"}},
		{"replicationcontroller", &corev1.ReplicationController{ObjectMeta: objMeta("rc"),
			Spec:   corev1.ReplicationControllerSpec{Replicas: ptr(int32(3)), Selector: map[string]string{"app": "web"}, Template: ptr(template("a"))},
			Status: corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2}},
			[]any{"rc", int64(3), int64(3), int64(2), "5m", "a", "a:1", "app=web"}},
		{"replicationcontroller without template", &corev1.ReplicationController{ObjectMeta: objMeta("rc")},
			[]any{"rc", int64(0), int64(0), int64(0), "5m", "", "", "<none>"}},
		{"service clusterip", &corev1.Service{ObjectMeta: objMeta("svc"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Ports:    []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}, {Port: 53, Protocol: corev1.ProtocolTCP}},
			Selector: map[string]string{"k8s-app": "dns"}}},
			[]any{"svc", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "5m", "k8s-app=dns"}},
		{"service nodeport with external ip", &corev1.Service{ObjectMeta: objMeta("svc"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.96.1.1"}, ExternalIPs: []string{"1.2.3.4"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}}},
			[]any{"svc", "NodePort", "10.96.1.1", "1.2.3.4", "80:30080/TCP", "5m", "<none>"}},
		{"service loadbalancer pending", &corev1.Service{ObjectMeta: objMeta("svc"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.1.2"}}},
			[]any{"svc", "LoadBalancer", "10.96.1.2", "<pending>", "<none>", "5m", "<none>"}},
		{"service loadbalancer addresses sorted and unclipped", &corev1.Service{ObjectMeta: objMeta("svc"),
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.1.2"}, ExternalIPs: []string{"9.9.9.9"}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
				{Hostname: "lb.example.com"}, {IP: "192.168.100.200"}, {IP: "192.168.100.200"}}}}},
			[]any{"svc", "LoadBalancer", "10.96.1.2", "192.168.100.200,lb.example.com,9.9.9.9", "<none>", "5m", "<none>"}},
		{"service externalname headless", &corev1.Service{ObjectMeta: objMeta("svc"), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}},
			[]any{"svc", "ExternalName", "<none>", "db.example.com", "<none>", "5m", "<none>"}},
		{"endpoints", &corev1.Endpoints{ObjectMeta: objMeta("ep"), Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}, {IP: "fd00::3"}},
			Ports:     []corev1.EndpointPort{{Port: 80}, {Port: 443}},
		}}}, []any{"ep", "10.0.0.1:80,10.0.0.2:80,[fd00::3]:80 + 3 more...", "5m"}},
		{"endpoints headless without ports", &corev1.Endpoints{ObjectMeta: objMeta("ep"), Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}}}}, []any{"ep", "10.0.0.1", "5m"}},
		{"endpoints empty", &corev1.Endpoints{ObjectMeta: objMeta("ep")}, []any{"ep", "<none>", "5m"}},
		{"node ready control plane", &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", CreationTimestamp: ago(50 * time.Hour), Labels: map[string]string{
				"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master", "node-role.kubernetes.io/": "x"}},
			Spec: corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "n1"}, {Type: corev1.NodeInternalIP, Address: "192.168.1.10"}},
				NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.1.0", ContainerRuntimeVersion: "containerd://1.7.24"},
			}},
			[]any{"n1", "Ready,SchedulingDisabled", "control-plane,master", "2d2h", "v1.37.2", "192.168.1.10", "<none>",
				"Debian GNU/Linux 12 (bookworm)", "6.1.0", "containerd://1.7.24"}},
		{"node not ready", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}},
			[]any{"n2", "NotReady", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
		{"node without conditions", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3"}},
			[]any{"n3", "Unknown", "<none>", "<unknown>", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
		{"namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", CreationTimestamp: ago(400 * 24 * time.Hour)},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, []any{"kube-system", "Active", "400d"}},
		{"configmap", &corev1.ConfigMap{ObjectMeta: objMeta("cm"), Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": nil}},
			[]any{"cm", int64(2), "5m"}},
		{"secret", &corev1.Secret{ObjectMeta: objMeta("s"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": nil, "b": nil, "c": nil}},
			[]any{"s", "Opaque", int64(3), "5m"}},
		{"serviceaccount", &corev1.ServiceAccount{ObjectMeta: objMeta("default")}, []any{"default", int64(0), "5m"}},
		{"persistentvolume bound", &corev1.PersistentVolume{ObjectMeta: objMeta("pv1"), Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: q("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "ns", Name: "data"},
			StorageClassName:              "local", VolumeMode: ptr(corev1.PersistentVolumeFilesystem)},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}},
			[]any{"pv1", "10Gi", "RWO,RWX", "Retain", "Bound", "ns/data", "local", "<unset>", "", "5m", "Filesystem"}},
		{"persistentvolume terminating with beta class", &corev1.PersistentVolume{
			ObjectMeta: withAnnotations(func() metav1.ObjectMeta { m := objMeta("pv2"); m.DeletionTimestamp = ptr(ago(0)); return m }(), betaStorageClassAnnotation, "old"),
			Spec:       corev1.PersistentVolumeSpec{StorageClassName: "new", VolumeAttributesClassName: ptr("gold")},
			Status:     corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased, Reason: "Oops"}},
			[]any{"pv2", "0", "", "", "Terminating", "", "old", "gold", "Oops", "5m", "<unset>"}},
		{"persistentvolumeclaim bound", &corev1.PersistentVolumeClaim{ObjectMeta: objMeta("data"),
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv1", StorageClassName: ptr("local"), VolumeMode: ptr(corev1.PersistentVolumeBlock)},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
				Capacity: corev1.ResourceList{corev1.ResourceStorage: q("1Gi")}}},
			[]any{"data", "Bound", "pv1", "1Gi", "RWOP", "local", "<unset>", "5m", "Block"}},
		{"persistentvolumeclaim pending", &corev1.PersistentVolumeClaim{ObjectMeta: objMeta("data"),
			Spec:   corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("1Gi")}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
			[]any{"data", "Pending", "", "", "", "", "<unset>", "5m", "<unset>"}},
		{"resourcequota", &corev1.ResourceQuota{ObjectMeta: objMeta("quota"), Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"pods": q("10"), "requests.cpu": q("2"), "limits.memory": q("2Gi"), "limits.cpu": q("4")},
			Used: corev1.ResourceList{"pods": q("3"), "requests.cpu": q("500m")}}},
			[]any{"quota", "pods: 3/10, requests.cpu: 500m/2", "limits.cpu: 0/4, limits.memory: 0/2Gi", "5m"}},
		{"limitrange uses default columns", &corev1.LimitRange{ObjectMeta: objMeta("limits")}, []any{"limits", "2026-03-04T11:55:00Z"}},
		{"event core", &events.Event{ObjectMeta: objMeta("web.1"),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{app}"},
			Reason:         "Pulled", Message: "  Image pulled\n", Type: corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: "kubelet", Host: "n1"},
			FirstTimestamp: ago(time.Hour), LastTimestamp: ago(3 * time.Minute), Count: 4},
			[]any{"3m", "Normal", "Pulled", "pod/web", "spec.containers{app}", "kubelet, n1", "Image pulled", "60m", int64(4), "web.1"}},
		{"event from events.k8s.io with series", &events.Event{ObjectMeta: objMeta("web.2"),
			InvolvedObject: corev1.ObjectReference{Kind: "Node"}, Reason: "Rebooted", Type: corev1.EventTypeWarning,
			ReportingController: "kubelet", ReportingInstance: "n1",
			EventTime: metav1.NewMicroTime(now.Add(-2 * time.Hour)),
			Series:    &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-30 * time.Second))}},
			[]any{"30s", "Warning", "Rebooted", "node", "", "kubelet, n1", "", "120m", int64(7), "web.2"}},
		{"event singleton without count", &events.Event{ObjectMeta: objMeta("e"), Source: corev1.EventSource{Component: "scheduler"},
			EventTime: metav1.NewMicroTime(now.Add(-10 * time.Second))},
			[]any{"10s", "", "", "", "", "scheduler", "", "10s", int64(1), "e"}},
		{"deployment", &appsv1.Deployment{ObjectMeta: objMeta("web"),
			Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: selector, Template: template("app", "sidecar")},
			Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2}},
			[]any{"web", "2/3", int64(3), int64(2), "5m", "app,sidecar", "app:1,sidecar:1", "app=web"}},
		{"deployment invalid selector", &appsv1.Deployment{ObjectMeta: objMeta("web"), Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}}},
			[]any{"web", "0/0", int64(0), int64(0), "5m", "", "", "<invalid>"}},
		{"replicaset", &appsv1.ReplicaSet{ObjectMeta: objMeta("web-1"),
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr(int32(2)), Selector: selector, Template: template("app")},
			Status: appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1}},
			[]any{"web-1", int64(2), int64(2), int64(1), "5m", "app", "app:1", "app=web"}},
		{"statefulset", &appsv1.StatefulSet{ObjectMeta: objMeta("db"),
			Spec:   appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Template: template("db")},
			Status: appsv1.StatefulSetStatus{ReadyReplicas: 3}},
			[]any{"db", "3/3", "5m", "db", "db:1"}},
		{"daemonset", &appsv1.DaemonSet{ObjectMeta: objMeta("proxy"),
			Spec: appsv1.DaemonSetSpec{Selector: selector, Template: func() corev1.PodTemplateSpec {
				t := template("proxy")
				t.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
				return t
			}()},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2}},
			[]any{"proxy", int64(3), int64(3), int64(2), int64(3), int64(2), "kubernetes.io/os=linux", "5m", "proxy", "proxy:1", "app=web"}},
		{"controllerrevision", &appsv1.ControllerRevision{ObjectMeta: func() metav1.ObjectMeta {
			m := objMeta("db-7d9f")
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", Controller: ptr(true)}}
			return m
		}(), Revision: 2}, []any{"db-7d9f", "statefulset.apps/db", int64(2), "5m"}},
		{"controllerrevision without owner", &appsv1.ControllerRevision{ObjectMeta: objMeta("x"), Revision: 1}, []any{"x", "<none>", int64(1), "5m"}},
		{"job running", &batchv1.Job{ObjectMeta: objMeta("pi"),
			Spec:   batchv1.JobSpec{Completions: ptr(int32(3)), Selector: selector, Template: template("pi")},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: ptr(ago(4 * time.Minute))}},
			[]any{"pi", "Running", "1/3", "4m", "5m", "pi", "pi:1", "app=web"}},
		{"job complete", &batchv1.Job{ObjectMeta: objMeta("pi"),
			Spec: batchv1.JobSpec{Completions: ptr(int32(1)), Template: template("pi")},
			Status: batchv1.JobStatus{Succeeded: 1, StartTime: ptr(ago(4 * time.Minute)), CompletionTime: ptr(ago(3*time.Minute + 50*time.Second)),
				Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}, {Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}},
			[]any{"pi", "Complete", "1/1", "10s", "5m", "pi", "pi:1", "<none>"}},
		{"job parallel without completions suspended", &batchv1.Job{ObjectMeta: objMeta("q"),
			Spec:   batchv1.JobSpec{Parallelism: ptr(int32(4)), Template: template("w")},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}}},
			[]any{"q", "Suspended", "0/1 of 4", "", "5m", "w", "w:1", "<none>"}},
		{"job failure target", &batchv1.Job{ObjectMeta: objMeta("q"),
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}}}},
			[]any{"q", "FailureTarget", "0/1", "", "5m", "", "", "<none>"}},
		{"job success criteria met", &batchv1.Job{ObjectMeta: objMeta("q"),
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue}}}},
			[]any{"q", "SuccessCriteriaMet", "0/1", "", "5m", "", "", "<none>"}},
		{"job failed while deleting", &batchv1.Job{ObjectMeta: func() metav1.ObjectMeta { m := objMeta("q"); m.DeletionTimestamp = ptr(ago(0)); return m }(),
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}}},
			[]any{"q", "Failed", "0/1", "", "5m", "", "", "<none>"}},
		{"job terminating", &batchv1.Job{ObjectMeta: func() metav1.ObjectMeta { m := objMeta("q"); m.DeletionTimestamp = ptr(ago(0)); return m }()},
			[]any{"q", "Terminating", "0/1", "", "5m", "", "", "<none>"}},
		{"cronjob", &batchv1.CronJob{ObjectMeta: objMeta("backup"),
			Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", TimeZone: ptr("Etc/UTC"), Suspend: ptr(false),
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template("backup")}}},
			Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "backup-1"}}, LastScheduleTime: ptr(ago(65 * time.Second))}},
			[]any{"backup", "*/5 * * * *", "Etc/UTC", "False", int64(1), "65s", "5m", "backup", "backup:1", "<none>"}},
		{"cronjob never scheduled", &batchv1.CronJob{ObjectMeta: objMeta("backup"), Spec: batchv1.CronJobSpec{Schedule: "@daily"}},
			[]any{"backup", "@daily", "<none>", "<unset>", int64(0), "<none>", "5m", "", "", "<none>"}},
		{"horizontalpodautoscaler", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objMeta("web"),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr(int32(2)), MaxReplicas: 10,
				Metrics: []autoscalingv2.MetricSpec{
					{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
						Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(80))}}},
					{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
						Target: autoscalingv2.MetricTarget{AverageValue: ptr(q("1k"))}}},
					{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
						Target: autoscalingv2.MetricTarget{Value: ptr(q("5"))}}},
				}},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(45))}}},
			}}},
			[]any{"web", "Deployment/web", "cpu: 45%/80%, <unknown>/1k + 1 more...", "2", int64(10), int64(3), "5m"}},
		{"horizontalpodautoscaler without metrics", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objMeta("web"),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "StatefulSet", Name: "db"}, MaxReplicas: 1}},
			[]any{"web", "StatefulSet/db", "<none>", "<unset>", int64(1), int64(0), "5m"}},
		{"horizontalpodautoscaler object and external averages", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: objMeta("web"),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 1, Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: ptr(q("10"))}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{AverageValue: ptr(q("100Mi"))}}},
			}},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: ptr(q("7"))}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{}},
			}}},
			[]any{"web", "/", "7/10 (avg), memory: <nil>/100Mi", "<unset>", int64(1), int64(0), "5m"}},
		{"scale", &autoscalingv1.Scale{ObjectMeta: objMeta("web"), Spec: autoscalingv1.ScaleSpec{Replicas: 3}, Status: autoscalingv1.ScaleStatus{Replicas: 2}},
			[]any{"web", int64(3), int64(2), "5m"}},
		{"lease", &coordinationv1.Lease{ObjectMeta: objMeta("kube-scheduler"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("cp1_abc")}},
			[]any{"kube-scheduler", "cp1_abc", "5m"}},
		{"rolebinding", &rbacv1.RoleBinding{ObjectMeta: objMeta("dev-edit"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "Group", Name: "dev"}, {Kind: "User", Name: "bob"}, {Kind: "ServiceAccount", Namespace: "ci", Name: "deployer"}}},
			[]any{"dev-edit", "ClusterRole/edit", "5m", "alice, bob", "dev", "ci:deployer"}},
		{"clusterrolebinding", &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta("cluster-admin"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: "Group", Name: "system:masters"}}},
			[]any{"cluster-admin", "ClusterRole/cluster-admin", "5m", "", "system:masters", ""}},
		{"lease unheld", &coordinationv1.Lease{ObjectMeta: objMeta("x")}, []any{"x", "", "5m"}},
		{"priorityclass", &schedulingv1.PriorityClass{ObjectMeta: objMeta("system-node-critical"), Value: 2000001000, GlobalDefault: false,
			PreemptionPolicy: ptr(corev1.PreemptLowerPriority)},
			[]any{"system-node-critical", int64(2000001000), false, "5m", "PreemptLowerPriority"}},
		{"poddisruptionbudget", &policyv1.PodDisruptionBudget{ObjectMeta: objMeta("web"),
			Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromString("50%"))},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}},
			[]any{"web", "50%", "N/A", int64(1), "5m"}},
		{"runtimeclass", &nodev1.RuntimeClass{ObjectMeta: objMeta("gvisor"), Handler: "runsc"}, []any{"gvisor", "runsc", "5m"}},
		{"endpointslice", &discoveryv1.EndpointSlice{ObjectMeta: objMeta("web-abc"), AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Port: ptr(int32(80))}, {Name: ptr("metrics")}, {}, {Port: ptr(int32(9000))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3"}}}},
			[]any{"web-abc", "IPv4", "80,metrics,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3", "5m"}},
		{"endpointslice empty", &discoveryv1.EndpointSlice{ObjectMeta: objMeta("web-abc"), AddressType: discoveryv1.AddressTypeIPv6},
			[]any{"web-abc", "IPv6", "<unset>", "<unset>", "5m"}},
		{"ingress", &networkingv1.Ingress{ObjectMeta: objMeta("web"),
			Spec: networkingv1.IngressSpec{IngressClassName: ptr("nginx"), TLS: []networkingv1.IngressTLS{{}},
				Rules: []networkingv1.IngressRule{{Host: "a.example"}, {}, {Host: "b.example"}, {Host: "c.example"}, {Host: "d.example"}}},
			Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: "10.1.1.1"}}}}},
			[]any{"web", "nginx", "a.example,b.example,c.example + 2 more...", "10.1.1.1", "80, 443", "5m"}},
		{"ingress default backend only", &networkingv1.Ingress{ObjectMeta: objMeta("web")}, []any{"web", "<none>", "*", "", "80", "5m"}},
		{"ingressclass default", &networkingv1.IngressClass{ObjectMeta: withAnnotations(objMeta("nginx"), defaultIngressClassAnnotation, "true"),
			Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx", Parameters: &networkingv1.IngressClassParametersReference{
				APIGroup: ptr("k8s.example.com"), Kind: "IngressParameters", Name: "cfg"}}},
			[]any{"nginx (default)", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/cfg", "5m"}},
		{"ingressclass plain", &networkingv1.IngressClass{ObjectMeta: objMeta("other"), Spec: networkingv1.IngressClassSpec{Controller: "c"}},
			[]any{"other", "c", "<none>", "5m"}},
		{"networkpolicy", &networkingv1.NetworkPolicy{ObjectMeta: objMeta("deny")}, []any{"deny", "<none>", "5m"}},
		{"servicecidr", &networkingv1.ServiceCIDR{ObjectMeta: objMeta("kubernetes"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "fd00:10:96::/112"}}},
			[]any{"kubernetes", "10.96.0.0/12,fd00:10:96::/112", "5m"}},
		{"ipaddress", &networkingv1.IPAddress{ObjectMeta: objMeta("10.96.0.1"), Spec: networkingv1.IPAddressSpec{
			ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "kubernetes"}}},
			[]any{"10.96.0.1", "services/default/kubernetes", "5m"}},
		{"ipaddress with group", &networkingv1.IPAddress{ObjectMeta: objMeta("10.0.0.1"), Spec: networkingv1.IPAddressSpec{
			ParentRef: &networkingv1.ParentReference{Group: "Gateway.Networking.k8s.io", Resource: "Gateways", Name: "gw"}}},
			[]any{"10.0.0.1", "gateways.gateway.networking.k8s.io/gw", "5m"}},
		{"storageclass default", &storagev1.StorageClass{ObjectMeta: withAnnotations(objMeta("local"), betaDefaultStorageClassAnnotation, "true"),
			Provisioner: "rancher.io/local-path", VolumeBindingMode: ptr(storagev1.VolumeBindingWaitForFirstConsumer)},
			[]any{"local (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", false, "5m"}},
		{"storageclass retain expandable", &storagev1.StorageClass{ObjectMeta: objMeta("fast"), Provisioner: "p",
			ReclaimPolicy: ptr(corev1.PersistentVolumeReclaimRetain), AllowVolumeExpansion: ptr(true)},
			[]any{"fast", "p", "Retain", "Immediate", true, "5m"}},
		{"csidriver defaults", &storagev1.CSIDriver{ObjectMeta: objMeta("csi.example.com")},
			[]any{"csi.example.com", true, false, false, "<unset>", false, "<none>", "5m"}},
		{"csidriver set", &storagev1.CSIDriver{ObjectMeta: objMeta("csi.example.com"), Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr(false), PodInfoOnMount: ptr(true), StorageCapacity: ptr(true), RequiresRepublish: ptr(true),
			TokenRequests:        []storagev1.TokenRequest{{Audience: "a"}, {Audience: "b"}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}},
			[]any{"csi.example.com", false, true, true, "a,b", true, "Persistent,Ephemeral", "5m"}},
		{"csinode", &storagev1.CSINode{ObjectMeta: objMeta("n1"), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "a"}}}},
			[]any{"n1", int64(1), "5m"}},
		{"volumeattachment", &storagev1.VolumeAttachment{ObjectMeta: objMeta("csi-123"), Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "csi.example.com", NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv1")}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true}},
			[]any{"csi-123", "csi.example.com", "pv1", "n1", true, "5m"}},
		{"flowschema", &flowcontrolv1.FlowSchema{ObjectMeta: objMeta("exempt"), Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "exempt"}, MatchingPrecedence: 1,
			DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}},
			Status: flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse}}}},
			[]any{"exempt", "exempt", int64(1), "ByUser", "5m", "False"}},
		{"flowschema without status", &flowcontrolv1.FlowSchema{ObjectMeta: objMeta("x")},
			[]any{"x", "", int64(0), "<none>", "5m", "?"}},
		{"prioritylevelconfiguration limited", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: objMeta("workload-low"),
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr(int32(100)),
					LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
						Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50}}}}},
			[]any{"workload-low", "Limited", int32(100), int32(128), int32(6), int32(50), "5m"}},
		{"prioritylevelconfiguration exempt", &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: objMeta("exempt"),
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt}},
			[]any{"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "5m"}},
		{"deviceclass", &resourcev1.DeviceClass{ObjectMeta: objMeta("gpu")}, []any{"gpu", "5m"}},
		{"resourceclaim pending", &resourcev1.ResourceClaim{ObjectMeta: objMeta("c")}, []any{"c", "pending", "5m"}},
		{"resourceclaim allocated reserved", &resourcev1.ResourceClaim{ObjectMeta: objMeta("c"), Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{}, ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Name: "pod"}}}},
			[]any{"c", "allocated,reserved", "5m"}},
		{"resourceclaim deleted", &resourcev1.ResourceClaim{ObjectMeta: func() metav1.ObjectMeta { m := objMeta("c"); m.DeletionTimestamp = ptr(ago(0)); return m }()},
			[]any{"c", "deleted", "5m"}},
		{"resourceclaimtemplate", &resourcev1.ResourceClaimTemplate{ObjectMeta: objMeta("t")}, []any{"t", "5m"}},
		{"resourceslice", &resourcev1.ResourceSlice{ObjectMeta: objMeta("n1-gpu"), Spec: resourcev1.ResourceSliceSpec{
			NodeName: ptr("n1"), Driver: "gpu.example.com", Pool: resourcev1.ResourcePool{Name: "n1"}}},
			[]any{"n1-gpu", "n1", "gpu.example.com", "n1", "5m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cellsOf(t, tt.obj); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cells =\n %#v\nwant\n %#v", got, tt.want)
			}
		})
	}
}
