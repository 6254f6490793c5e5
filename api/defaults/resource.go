package defaults

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// now is the clock device taints are stamped with; tests replace it.
var now = time.Now

// ResourceClaim defaults the device requests of a claim and the tolerations
// recorded in its allocation.
func ResourceClaim(rc *resourcev1.ResourceClaim) {
	deviceClaim(&rc.Spec.Devices)
	if a := rc.Status.Allocation; a != nil {
		for i := range a.Devices.Results {
			deviceTolerations(a.Devices.Results[i].Tolerations)
		}
	}
}

// ResourceClaimTemplate defaults the device requests of the claim spec it
// stamps out.
func ResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) {
	deviceClaim(&t.Spec.Spec.Devices)
}

// ResourceSlice stamps each device taint without a time with the current
// time, to the second.
func ResourceSlice(rs *resourcev1.ResourceSlice) {
	for i := range rs.Spec.Devices {
		for j := range rs.Spec.Devices[i].Taints {
			deviceTaint(&rs.Spec.Devices[i].Taints[j])
		}
	}
}

// DeviceTaintRule stamps the rule's taint with the current time if it has
// none.
func DeviceTaintRule(r *resourcev1.DeviceTaintRule) {
	deviceTaint(&r.Spec.Taint)
}

// deviceClaim defaults each request: an exact request, or each alternative
// of a first-available list, asks for exactly one device unless told
// otherwise.
func deviceClaim(c *resourcev1.DeviceClaim) {
	for i := range c.Requests {
		r := &c.Requests[i]
		if e := r.Exactly; e != nil {
			allocationMode(&e.AllocationMode, &e.Count)
			deviceTolerations(e.Tolerations)
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			allocationMode(&s.AllocationMode, &s.Count)
			deviceTolerations(s.Tolerations)
		}
	}
}

func allocationMode(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

// deviceTolerations applies the +default="Equal" operator of k8s.io/api.
func deviceTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

func deviceTaint(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: now().Truncate(time.Second)}
	}
}
