package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The group has three small types; their copies are written out rather
// than generated, and deepcopy_test.go checks that no field is shared.

// DeepCopyInto copies s into out.
func (s *AddressPoolSpec) DeepCopyInto(out *AddressPoolSpec) {
	*out = *s
	out.Addresses = append([]string(nil), s.Addresses...)
	if s.AutoAssign != nil {
		v := *s.AutoAssign
		out.AutoAssign = &v
	}
	out.Namespaces = append([]string(nil), s.Namespaces...)
	if s.NamespaceSelector != nil {
		out.NamespaceSelector = s.NamespaceSelector.DeepCopy()
	}
	if s.ServiceSelector != nil {
		out.ServiceSelector = s.ServiceSelector.DeepCopy()
	}
}

// DeepCopyInto copies p into out.
func (p *AddressPool) DeepCopyInto(out *AddressPool) {
	out.TypeMeta = p.TypeMeta
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	p.Spec.DeepCopyInto(&out.Spec)
	out.Status = *p.Status.DeepCopy()
}

// DeepCopy returns a copy of p.
func (p *AddressPool) DeepCopy() *AddressPool {
	if p == nil {
		return nil
	}
	out := new(AddressPool)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *AddressPool) DeepCopyObject() runtime.Object {
	if p == nil {
		return nil
	}
	return p.DeepCopy()
}

// DeepCopyObject implements runtime.Object.
func (l *AddressPoolList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &AddressPoolList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]AddressPool, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// AddToScheme registers the group's kinds in a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &AddressPool{}, &AddressPoolList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

// DeepCopy returns a copy of s.
func (s *AddressPoolStatus) DeepCopy() *AddressPoolStatus {
	out := *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	return &out
}
