package podresizevalidator

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func node(name, os, cpu, memory string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}},
	}
}

func pod(nodeName, cpu, memory string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		}}}},
	}
}

func TestPodResizeValidator(t *testing.T) {
	p := New()
	admissiontest.Init(t, p, node("linux", "linux", "4", "8Gi"), node("win", "windows", "4", "8Gi"))
	tests := []struct {
		name        string
		pod         *corev1.Pod
		subresource string
		wantErr     string
	}{
		{"fits", pod("linux", "2", "1Gi"), "resize", ""},
		{"exactly allocatable", pod("linux", "4", "8Gi"), "resize", ""},
		{"too much cpu", pod("linux", "5", "1Gi"), "resize", "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000"},
		{"too much memory", pod("linux", "1", "9Gi"), "resize", "Node didn't have enough capacity: memory, requested: 9663676416, capacity: 8589934592"},
		{"windows node", pod("win", "1", "1Gi"), "resize", "not supported on Windows"},
		{"unscheduled pod", pod("", "64", "1Ti"), "resize", ""},
		{"missing node", pod("gone", "64", "1Ti"), "resize", ""},
		{"other subresources untouched", pod("linux", "64", "1Ti"), "status", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.pod, tt.pod.DeepCopy(), corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), tt.subresource, admission.Update, &metav1.UpdateOptions{}, false, nil)
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPodResizeValidatorGenerationAndCause(t *testing.T) {
	p := New()
	admissiontest.Init(t, p, node("linux", "linux", "4", "8Gi"))
	tests := []struct {
		name           string
		oldGen, newGen int64
		wantCause      bool
	}{
		{"spec unchanged is not checked", 2, 2, false},
		{"resize beyond allocatable names NodeCapacity", 1, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := pod("linux", "5", "1Gi")
			cur.Generation = tt.newGen
			old := cur.DeepCopy()
			old.Generation = tt.oldGen
			a := admission.NewAttributesRecord(cur, old, corev1.SchemeGroupVersion.WithKind("Pod"), "ns", "p",
				corev1.SchemeGroupVersion.WithResource("pods"), "resize", admission.Update, &metav1.UpdateOptions{}, false, nil)
			err := p.Validate(context.Background(), a, nil)
			if !tt.wantCause {
				if err != nil {
					t.Fatalf("got %v, want none", err)
				}
				return
			}
			var status *apierrors.StatusError
			if !errors.As(err, &status) || status.ErrStatus.Details == nil || len(status.ErrStatus.Details.Causes) == 0 ||
				status.ErrStatus.Details.Causes[0].Type != causeNodeCapacity || status.ErrStatus.Reason != metav1.StatusReasonForbidden {
				t.Fatalf("got %#v, want a Forbidden status with cause %s", err, causeNodeCapacity)
			}
		})
	}
}
