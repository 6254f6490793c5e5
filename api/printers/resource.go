package printers

import (
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
)

var deviceClassColumns = columns(nameCol(), ageCol())

func deviceClassCells(c *resourcev1.DeviceClass, now time.Time) []any {
	return []any{c.Name, age(c, now)}
}

var resourceClaimColumns = columns(
	nameCol(),
	col("State", typeString, "A summary of the current state (allocated, pending, reserved, etc.)."),
	ageCol(),
)

func resourceClaimCells(c *resourcev1.ResourceClaim, now time.Time) []any {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation == nil && c.DeletionTimestamp == nil:
		states = append(states, "pending")
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return []any{c.Name, strings.Join(states, ","), age(c, now)}
}

var resourceClaimTemplateColumns = columns(nameCol(), ageCol())

func resourceClaimTemplateCells(t *resourcev1.ResourceClaimTemplate, now time.Time) []any {
	return []any{t.Name, age(t, now)}
}

var resourceSliceColumns = columns(
	nameCol(),
	col("Node", typeString, resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]),
	col("Driver", typeString, resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]),
	col("Pool", typeString, resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
	ageCol(),
)

func resourceSliceCells(s *resourcev1.ResourceSlice, now time.Time) []any {
	return []any{s.Name, deref(s.Spec.NodeName), s.Spec.Driver, s.Spec.Pool.Name, age(s, now)}
}
