package limitranger

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	k8stesting "k8s.io/client-go/testing"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func plugin(t *testing.T, ranges ...runtime.Object) *Plugin {
	t.Helper()
	p := newPlugin()
	admissiontest.Init(t, p, ranges...)
	return p
}

func podAttrs(pod *corev1.Pod) admission.Attributes {
	return admission.NewAttributesRecord(pod, nil, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", pod.Name,
		corev1.SchemeGroupVersion.WithResource("pods"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
}

func TestLimitRanger(t *testing.T) {
	lr := func(items ...corev1.LimitRangeItem) *corev1.LimitRange {
		return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: items}}
	}
	tests := []struct {
		name         string
		limitRange   *corev1.LimitRange
		resources    corev1.ResourceRequirements
		wantLimits   corev1.ResourceList
		wantRequests corev1.ResourceList
		wantErr      string
	}{
		{
			name:         "defaults fill empty container",
			limitRange:   lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: rl("cpu", "500m"), DefaultRequest: rl("cpu", "100m")}),
			wantLimits:   rl("cpu", "500m"),
			wantRequests: rl("cpu", "100m"),
		},
		{
			name:         "own values kept",
			limitRange:   lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: rl("cpu", "500m"), DefaultRequest: rl("cpu", "100m")}),
			resources:    corev1.ResourceRequirements{Limits: rl("cpu", "1"), Requests: rl("cpu", "200m")},
			wantLimits:   rl("cpu", "1"),
			wantRequests: rl("cpu", "200m"),
		},
		{
			name:       "below min refused",
			limitRange: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: rl("memory", "64Mi")}),
			resources:  corev1.ResourceRequirements{Requests: rl("memory", "32Mi")},
			wantErr:    "minimum memory usage per Container is 64Mi, but request is 32Mi",
		},
		{
			name:       "above max refused",
			limitRange: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")}),
			resources:  corev1.ResourceRequirements{Limits: rl("cpu", "2"), Requests: rl("cpu", "2")},
			wantErr:    "maximum cpu usage per Container is 1, but limit is 2",
		},
		{
			name:       "no limit under max refused",
			limitRange: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rl("cpu", "1")}),
			wantErr:    "maximum cpu usage per Container is 1.  No limit is specified",
		},
		{
			name:       "ratio exceeded refused",
			limitRange: lr(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, MaxLimitRequestRatio: rl("cpu", "2")}),
			resources:  corev1.ResourceRequirements{Limits: rl("cpu", "1"), Requests: rl("cpu", "250m")},
			wantErr:    "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000",
		},
		{
			name:       "pod max sums containers",
			limitRange: lr(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: rl("memory", "100Mi")}),
			resources:  corev1.ResourceRequirements{Limits: rl("memory", "128Mi"), Requests: rl("memory", "128Mi")},
			wantErr:    "maximum memory usage per Pod is 100Mi, but limit is 128Mi",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugin(t, tt.limitRange)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: tt.resources}}}}
			a := podAttrs(pod)
			if admissiontest.ErrorWanted(t, admissiontest.Admit(p, a), tt.wantErr) {
				return
			}
			got := pod.Spec.Containers[0].Resources
			for n, q := range tt.wantLimits {
				if l := got.Limits[n]; l.Cmp(q) != 0 {
					t.Errorf("limit %s = %s, want %s", n, l.String(), q.String())
				}
			}
			for n, q := range tt.wantRequests {
				if r := got.Requests[n]; r.Cmp(q) != 0 {
					t.Errorf("request %s = %s, want %s", n, r.String(), q.String())
				}
			}
		})
	}
}

func TestLimitRangerClaims(t *testing.T) {
	p := plugin(t, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "10Gi")},
	}}})
	tests := []struct{ name, size, wantErr string }{
		{"within bounds", "5Gi", ""},
		{"too small", "500Mi", "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"},
		{"too big", "20Gi", "maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
				Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", tt.size)}}}
			a := admission.NewAttributesRecord(pvc, nil, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), "ns", "c",
				corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestLiveLookup covers a namespace the informer has no LimitRange for:
// one live list stands for every request in the next liveTTL (most
// namespaces have none), what it finds is applied, and a failed list
// refuses the pod instead of skipping the limits.
func TestLiveLookup(t *testing.T) {
	pod := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}
	}
	notYetSeen := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "ns"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, DefaultRequest: rl("cpu", "100m")}}}}
	tests := []struct {
		name        string
		list        func() (*corev1.LimitRangeList, error)
		wantRequest string
		wantErr     string
	}{
		{name: "none", list: func() (*corev1.LimitRangeList, error) { return &corev1.LimitRangeList{}, nil }},
		{name: "one the informer has not seen", list: func() (*corev1.LimitRangeList, error) {
			return &corev1.LimitRangeList{Items: []corev1.LimitRange{*notYetSeen}}, nil
		}, wantRequest: "100m"},
		{name: "list fails", list: func() (*corev1.LimitRangeList, error) { return nil, errors.New("etcd unavailable") },
			wantErr: "list limit ranges of namespace ns: etcd unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlugin()
			client := admissiontest.Init(t, p)
			lists := 0
			client.PrependReactor("list", "limitranges", func(action k8stesting.Action) (bool, runtime.Object, error) {
				if action.GetNamespace() != "ns" {
					return false, nil, nil // the informer's
				}
				lists++
				l, err := tt.list()
				if err != nil {
					return true, nil, err
				}
				return true, l, nil
			})
			for range 3 {
				pod := pod()
				a := podAttrs(pod)
				if admissiontest.ErrorWanted(t, admissiontest.Admit(p, a), tt.wantErr) {
					continue
				}
				if got := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; tt.wantRequest != "" && got.String() != tt.wantRequest {
					t.Errorf("cpu request %s, want %s", got.String(), tt.wantRequest)
				}
			}
			want := 1
			if tt.wantErr != "" {
				want = 3 // a failure is not remembered
			}
			if lists != want {
				t.Errorf("%d live lists for 3 pods, want %d", lists, want)
			}
		})
	}
}
