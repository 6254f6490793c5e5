package apiregistration

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Priority orders a group among groups (Group, higher first) and a version
// within its group (Version, higher first) in discovery.
type Priority struct {
	Group   int32
	Version int32
}

// crdPriority is what custom resources' APIServices get: after every
// built-in group, versions ordered by their kube-like names.
var crdPriority = Priority{Group: 1000, Version: 100}

// BuiltinPriorities are upstream's priorities of the built-in group versions,
// so kubectl sees groups in the order it sees on any cluster (core first,
// apps next, ...). A served group version missing here gets no APIService.
func BuiltinPriorities() map[schema.GroupVersion]Priority {
	return map[schema.GroupVersion]Priority{
		{Group: "", Version: "v1"}:                             {18000, 1},
		{Group: "apps", Version: "v1"}:                         {17800, 15},
		{Group: "events.k8s.io", Version: "v1"}:                {17750, 15},
		{Group: "authentication.k8s.io", Version: "v1"}:        {17700, 15},
		{Group: "authorization.k8s.io", Version: "v1"}:         {17600, 15},
		{Group: "autoscaling", Version: "v2"}:                  {17500, 30},
		{Group: "autoscaling", Version: "v1"}:                  {17500, 15},
		{Group: "batch", Version: "v1"}:                        {17400, 15},
		{Group: "certificates.k8s.io", Version: "v1"}:          {17300, 15},
		{Group: "networking.k8s.io", Version: "v1"}:            {17200, 15},
		{Group: "policy", Version: "v1"}:                       {17100, 15},
		{Group: "rbac.authorization.k8s.io", Version: "v1"}:    {17000, 15},
		{Group: "storage.k8s.io", Version: "v1"}:               {16800, 15},
		{Group: "apiextensions.k8s.io", Version: "v1"}:         {16700, 15},
		{Group: "admissionregistration.k8s.io", Version: "v1"}: {16700, 15},
		{Group: "scheduling.k8s.io", Version: "v1"}:            {16600, 15},
		{Group: "coordination.k8s.io", Version: "v1"}:          {16500, 15},
		{Group: "node.k8s.io", Version: "v1"}:                  {16300, 15},
		{Group: "discovery.k8s.io", Version: "v1"}:             {16200, 15},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: {16100, 21},
		{Group: "resource.k8s.io", Version: "v1"}:              {15900, 15},
		{Group: "storagemigration.k8s.io", Version: "v1"}:      {15800, 15},
	}
}
