package defaults

import (
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Expected values: upstream pkg/apis/resource/v1/defaults.go
// SetDefaults_ExactDeviceRequest, SetDefaults_DeviceSubRequest,
// SetDefaults_DeviceTaint, and DeviceToleration.Operator +default="Equal".

func TestResourceClaim(t *testing.T) {
	runDefaulting(t, ResourceClaim, []defaultingCase[resourcev1.ResourceClaim]{
		{
			name: "exact and first-available requests",
			in: &resourcev1.ResourceClaim{
				Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
					{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", Tolerations: []resourcev1.DeviceToleration{{Key: "k"}}}},
					{Name: "all", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "nic", AllocationMode: resourcev1.DeviceAllocationModeAll}},
					{Name: "any", FirstAvailable: []resourcev1.DeviceSubRequest{
						{Name: "big", DeviceClassName: "gpu-big", Count: 2},
						{Name: "small", DeviceClassName: "gpu-small"},
					}},
				}}},
				Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
					Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Tolerations: []resourcev1.DeviceToleration{{Key: "k", Operator: resourcev1.DeviceTolerationOpExists}, {Key: "j"}}}},
				}}},
			},
			want: &resourcev1.ResourceClaim{
				Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
					{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
						DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
						Tolerations: []resourcev1.DeviceToleration{{Key: "k", Operator: resourcev1.DeviceTolerationOpEqual}},
					}},
					// Count is only defaulted for ExactCount.
					{Name: "all", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "nic", AllocationMode: resourcev1.DeviceAllocationModeAll}},
					{Name: "any", FirstAvailable: []resourcev1.DeviceSubRequest{
						{Name: "big", DeviceClassName: "gpu-big", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
						{Name: "small", DeviceClassName: "gpu-small", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
					}},
				}}},
				Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
					Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Tolerations: []resourcev1.DeviceToleration{
						{Key: "k", Operator: resourcev1.DeviceTolerationOpExists}, {Key: "j", Operator: resourcev1.DeviceTolerationOpEqual},
					}}},
				}}},
			},
		},
	})
}

func TestResourceClaimTemplate(t *testing.T) {
	runDefaulting(t, ResourceClaimTemplate, []defaultingCase[resourcev1.ResourceClaimTemplate]{
		{
			name: "exact request",
			in: &resourcev1.ResourceClaimTemplate{Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
				Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu"}}}},
			}}},
			want: &resourcev1.ResourceClaimTemplate{Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
				Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
					DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
				}}}},
			}}},
		},
	})
}

func TestDeviceTaints(t *testing.T) {
	fixed := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	old := now
	now = func() time.Time { return fixed.Add(400 * time.Millisecond) }
	t.Cleanup(func() { now = old })
	stamped := &metav1.Time{Time: fixed} // truncated to the second
	earlier := &metav1.Time{Time: fixed.Add(-time.Hour)}

	t.Run("ResourceSlice", func(t *testing.T) {
		runDefaulting(t, ResourceSlice, []defaultingCase[resourcev1.ResourceSlice]{
			{
				name: "taints stamped once",
				in: &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Devices: []resourcev1.Device{{Name: "d0", Taints: []resourcev1.DeviceTaint{
					{Key: "a", Effect: resourcev1.DeviceTaintEffectNoSchedule},
					{Key: "b", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: earlier},
				}}}}},
				want: &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Devices: []resourcev1.Device{{Name: "d0", Taints: []resourcev1.DeviceTaint{
					{Key: "a", Effect: resourcev1.DeviceTaintEffectNoSchedule, TimeAdded: stamped},
					{Key: "b", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: earlier},
				}}}}},
			},
		})
	})
	t.Run("DeviceTaintRule", func(t *testing.T) {
		runDefaulting(t, DeviceTaintRule, []defaultingCase[resourcev1.DeviceTaintRule]{
			{
				name: "rule taint stamped",
				in:   &resourcev1.DeviceTaintRule{Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "a", Effect: resourcev1.DeviceTaintEffectNoSchedule}}},
				want: &resourcev1.DeviceTaintRule{Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "a", Effect: resourcev1.DeviceTaintEffectNoSchedule, TimeAdded: stamped}}},
			},
		})
	})
}
