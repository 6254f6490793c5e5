package validation

import (
	"context"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// resource.k8s.io/v1 publishes declarative validation with k8s.io/api; the
// kinds below run it and add the handwritten checks users hit first.
func init() {
	// Generated rules run with the operation they were written for: create
	// rules on create, update rules (which skip unchanged fields) on update.
	register(&kind[*resourcev1.DeviceClass]{
		cluster: true,
		spec: func(dc *resourcev1.DeviceClass) field.ErrorList {
			return deviceSelectors(dc.Spec.Selectors, specPath.Child("selectors"))
		},
		createOnly: func(dc *resourcev1.DeviceClass) field.ErrorList {
			return declarative(resourcev1.Validate_DeviceClassSpec, specPath, &dc.Spec, nil)
		},
		change: func(dc, old *resourcev1.DeviceClass) field.ErrorList {
			return declarative(resourcev1.Validate_DeviceClassSpec, specPath, &dc.Spec, &old.Spec)
		},
	})
	register(&kind[*resourcev1.ResourceClaim]{
		spec: func(c *resourcev1.ResourceClaim) field.ErrorList {
			return deviceClaim(&c.Spec.Devices, specPath.Child("devices"))
		},
		createOnly: func(c *resourcev1.ResourceClaim) field.ErrorList {
			return declarative(resourcev1.Validate_ResourceClaimSpec, specPath, &c.Spec, nil)
		},
		change: func(c, old *resourcev1.ResourceClaim) field.ErrorList {
			return immutable(c.Spec, old.Spec, specPath)
		},
		statusChange: resourceClaimStatusChange,
	})
	register(&kind[*resourcev1.ResourceClaimTemplate]{
		spec: func(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
			return deviceClaim(&t.Spec.Spec.Devices, specPath.Child("spec", "devices"))
		},
		createOnly: func(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
			return declarative(resourcev1.Validate_ResourceClaimTemplateSpec, specPath, &t.Spec, nil)
		},
		change: func(t, old *resourcev1.ResourceClaimTemplate) field.ErrorList {
			return immutable(t.Spec, old.Spec, specPath)
		},
	})
	register(&kind[*resourcev1.DeviceTaintRule]{
		cluster: true,
		spec:    func(r *resourcev1.DeviceTaintRule) field.ErrorList { return deviceTaintRuleRules(&r.Spec) },
		createOnly: func(r *resourcev1.DeviceTaintRule) field.ErrorList {
			return declarative(resourcev1.Validate_DeviceTaintRuleSpec, specPath, &r.Spec, nil)
		},
		change: func(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
			return declarative(resourcev1.Validate_DeviceTaintRuleSpec, specPath, &r.Spec, &old.Spec)
		},
		statusChange: func(r, old *resourcev1.DeviceTaintRule) field.ErrorList {
			return declarative(resourcev1.Validate_DeviceTaintRuleStatus, field.NewPath("status"), &r.Status, &old.Status)
		},
	})
	register(&kind[*resourcev1.ResourceSlice]{
		cluster: true,
		spec:    func(s *resourcev1.ResourceSlice) field.ErrorList { return resourceSliceRules(&s.Spec) },
		createOnly: func(s *resourcev1.ResourceSlice) field.ErrorList {
			return declarative(resourcev1.Validate_ResourceSliceSpec, specPath, &s.Spec, nil)
		},
		change: func(s, old *resourcev1.ResourceSlice) field.ErrorList {
			var errs field.ErrorList
			errs = append(errs, immutable(s.Spec.Driver, old.Spec.Driver, specPath.Child("driver"))...)
			errs = append(errs, immutable(s.Spec.Pool.Name, old.Spec.Pool.Name, specPath.Child("pool", "name"))...)
			errs = append(errs, immutable(s.Spec.NodeName, old.Spec.NodeName, specPath.Child("nodeName"))...)
			// A slice already using an alpha field may keep it, as upstream's
			// strategy enables the option for objects that use it.
			opts := declarativeOptions()
			opts["DRAPartitionableDevicesType"] = old.Spec.PartitionTypeAttribute != nil
			return append(errs, declarativeWith(opts, resourcev1.Validate_ResourceSliceSpec, specPath, &s.Spec, &old.Spec)...)
		},
	})
}

// declarativeOptions are the feature-gated options the generated rules
// consult, at their upstream defaults (alpha features off).
func declarativeOptions() map[string]bool {
	return map[string]bool{"DRAPartitionableDevicesType": false}
}

// declarative runs a generated validation function and keeps the errors
// upstream enforces with beta declarative validation on (the default).
func declarative[T any](fn func(context.Context, operation.Operation, *field.Path, *T, *T) field.ErrorList, fldPath *field.Path, obj, old *T) field.ErrorList {
	return declarativeWith(declarativeOptions(), fn, fldPath, obj, old)
}

func declarativeWith[T any](opts map[string]bool, fn func(context.Context, operation.Operation, *field.Path, *T, *T) field.ErrorList, fldPath *field.Path, obj, old *T) field.ErrorList {
	ctx := context.Background()
	op := operation.Operation{Type: operation.Create, Options: opts}
	if old != nil {
		op.Type = operation.Update
	}
	return validate.FilterEnforcedDeclarativeErrors(ctx, fn(ctx, op, fldPath, obj, old), true)
}

var allocationModes = []resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeExactCount, resourcev1.DeviceAllocationModeAll}

func deviceSelectors(sels []resourcev1.DeviceSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range sels {
		p := fldPath.Index(i)
		switch {
		case s.CEL == nil:
			errs = append(errs, field.Required(p.Child("cel"), ""))
		case s.CEL.Expression == "":
			errs = append(errs, field.Required(p.Child("cel", "expression"), ""))
		}
	}
	return errs
}

// deviceClaim checks the requests of a claim: named uniquely, each either
// one exact request or a list of alternatives.
func deviceClaim(dc *resourcev1.DeviceClaim, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	// Duplicate names are reported by the generated rules (a map-keyed list).
	for i, r := range dc.Requests {
		p := fldPath.Child("requests").Index(i)
		if r.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, dns1123Label(r.Name, p.Child("name"))...)
		}
		switch {
		case r.Exactly != nil && len(r.FirstAvailable) > 0:
			errs = append(errs, field.Invalid(p, "{`exactly`, `firstAvailable`}", "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
		case r.Exactly == nil && len(r.FirstAvailable) == 0:
			errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
		case r.Exactly != nil:
			e := r.Exactly
			errs = append(errs, deviceRequest(e.DeviceClassName, e.AllocationMode, e.Count, e.Selectors, p.Child("exactly"))...)
		}
		subNames := sets.New[string]()
		for j, s := range r.FirstAvailable {
			sp := p.Child("firstAvailable").Index(j)
			if s.Name == "" {
				errs = append(errs, field.Required(sp.Child("name"), ""))
			} else {
				errs = append(errs, dns1123Label(s.Name, sp.Child("name"))...)
				if subNames.Has(s.Name) {
					errs = append(errs, field.Duplicate(sp.Child("name"), s.Name))
				}
				subNames.Insert(s.Name)
			}
			errs = append(errs, deviceRequest(s.DeviceClassName, s.AllocationMode, s.Count, s.Selectors, sp)...)
		}
	}
	return errs
}

func deviceRequest(className string, mode resourcev1.DeviceAllocationMode, count int64, sels []resourcev1.DeviceSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if className == "" {
		errs = append(errs, field.Required(fldPath.Child("deviceClassName"), ""))
	} else {
		errs = append(errs, dns1123Subdomain(className, fldPath.Child("deviceClassName"))...)
	}
	errs = append(errs, optionalEnum(mode, fldPath.Child("allocationMode"), allocationModes...)...)
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			errs = append(errs, field.Invalid(fldPath.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode)))
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			errs = append(errs, field.Invalid(fldPath.Child("count"), count, isNotPositiveErrorMsg))
		}
	}
	errs = append(errs, deviceSelectors(sels, fldPath.Child("selectors"))...)
	return errs
}

func resourceClaimStatusChange(c, old *resourcev1.ResourceClaim) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("status")
	// An allocation is only ever replaced by deallocating first.
	if old.Status.Allocation != nil && c.Status.Allocation != nil {
		errs = append(errs, immutable(c.Status.Allocation, old.Status.Allocation, sp.Child("allocation"))...)
	}
	if len(c.Status.ReservedFor) > 0 && c.Status.Allocation == nil {
		errs = append(errs, field.Forbidden(sp.Child("reservedFor"), "may not be specified when `allocated` is not set"))
	}
	uids := sets.New[string]()
	for i, r := range c.Status.ReservedFor {
		p := sp.Child("reservedFor").Index(i)
		if r.Resource == "" {
			errs = append(errs, field.Required(p.Child("resource"), ""))
		}
		if r.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		if uids.Has(string(r.UID)) {
			errs = append(errs, field.Duplicate(p.Child("uid"), r.UID))
		}
		uids.Insert(string(r.UID))
	}
	errs = append(errs, declarative(resourcev1.Validate_ResourceClaimStatus, sp, &c.Status, &old.Status)...)
	return errs
}

func resourceSliceRules(spec *resourcev1.ResourceSliceSpec) field.ErrorList {
	var errs field.ErrorList
	if spec.Driver == "" {
		errs = append(errs, field.Required(specPath.Child("driver"), ""))
	} else {
		errs = append(errs, dns1123Subdomain(spec.Driver, specPath.Child("driver"))...)
	}
	pp := specPath.Child("pool")
	if spec.Pool.Name == "" {
		errs = append(errs, field.Required(pp.Child("name"), ""))
	}
	errs = append(errs, nonNegative(spec.Pool.Generation, pp.Child("generation"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pp.Child("resourceSliceCount"), spec.Pool.ResourceSliceCount, isNotPositiveErrorMsg))
	}
	n := 0
	if spec.NodeName != nil {
		n++
		errs = append(errs, dns1123Subdomain(*spec.NodeName, specPath.Child("nodeName"))...)
	}
	if spec.NodeSelector != nil {
		n++
		errs = append(errs, nodeSelector(spec.NodeSelector, specPath.Child("nodeSelector"))...)
	}
	if spec.AllNodes != nil && *spec.AllNodes {
		n++
	}
	if spec.PerDeviceNodeSelection != nil && *spec.PerDeviceNodeSelection {
		n++
	}
	switch {
	case n == 0 && len(spec.SharedCounters) == 0:
		errs = append(errs, field.Required(specPath, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	case n > 1:
		errs = append(errs, field.Invalid(specPath, "", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
	}
	names := sets.New[string]()
	for i, d := range spec.Devices {
		p := specPath.Child("devices").Index(i).Child("name")
		if d.Name == "" {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		errs = append(errs, dns1123Label(d.Name, p)...)
		if names.Has(d.Name) {
			errs = append(errs, field.Duplicate(p, d.Name))
		}
		names.Insert(d.Name)
	}
	return errs
}

// deviceTaintRuleRules checks what the generated rules leave out: the
// selector's names and the taint's key and value, which follow node taints.
func deviceTaintRuleRules(spec *resourcev1.DeviceTaintRuleSpec) field.ErrorList {
	var errs field.ErrorList
	if sel := spec.DeviceSelector; sel != nil {
		sp := specPath.Child("deviceSelector")
		if sel.Driver != nil {
			errs = append(errs, dns1123Subdomain(*sel.Driver, sp.Child("driver"))...)
		}
		if sel.Pool != nil {
			errs = append(errs, resourcePoolName(*sel.Pool, sp.Child("pool"))...)
		}
		if sel.Device != nil {
			errs = append(errs, dns1123Label(*sel.Device, sp.Child("device"))...)
		}
	}
	tp := specPath.Child("taint")
	if spec.Taint.Key == "" {
		errs = append(errs, field.Required(tp.Child("key"), ""))
	} else {
		errs = append(errs, qualifiedName(spec.Taint.Key, tp.Child("key"))...)
	}
	return append(errs, labelValue(spec.Taint.Value, tp.Child("value"))...)
}

// resourcePoolName checks a pool name: DNS subdomains joined by slashes.
func resourcePoolName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, dns1123Subdomain(part, fldPath)...)
	}
	return errs
}
