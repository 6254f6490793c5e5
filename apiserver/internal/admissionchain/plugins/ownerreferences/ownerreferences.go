package ownerreferences

import (
	"context"
	"errors"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Plugin checks the permissions behind owner references.
type Plugin struct {
	*admission.Handler
	authz  authorizer.Authorizer
	mapper meta.RESTMapper
}

var (
	_ admission.ValidationInterface      = (*Plugin)(nil)
	_ genericinitializer.WantsAuthorizer = (*Plugin)(nil)
	_ genericinitializer.WantsRESTMapper = (*Plugin)(nil)
)

// SetAuthorizer implements WantsAuthorizer.
func (p *Plugin) SetAuthorizer(a authorizer.Authorizer) { p.authz = a }

// SetRESTMapper implements WantsRESTMapper.
func (p *Plugin) SetRESTMapper(m meta.RESTMapper) { p.mapper = m }

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.authz == nil || p.mapper == nil {
		return errors.New("OwnerReferencesPermissionEnforcement needs an authorizer and a REST mapper")
	}
	return nil
}

func refsOf(obj any) ([]metav1.OwnerReference, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	return m.GetOwnerReferences(), true
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetObject() == nil {
		return nil
	}
	refs, ok := refsOf(a.GetObject())
	if !ok {
		return nil
	}
	var oldRefs []metav1.OwnerReference
	if a.GetOldObject() != nil {
		oldRefs, _ = refsOf(a.GetOldObject())
	}
	if apiequality.Semantic.DeepEqual(refs, oldRefs) || (len(refs) == 0 && len(oldRefs) == 0) {
		return nil
	}
	del := authorizer.AttributesRecord{
		User: a.GetUserInfo(), Verb: "delete", Namespace: a.GetNamespace(), Name: a.GetName(),
		APIGroup: a.GetResource().Group, APIVersion: a.GetResource().Version, Resource: a.GetResource().Resource,
		ResourceRequest: true,
	}
	if d, reason, err := p.authz.Authorize(ctx, del); d != authorizer.DecisionAllow {
		return admission.NewForbidden(a, fmt.Errorf("cannot set an ownerRef on a resource you can't delete: %v, %v", reason, err))
	}
	for _, ref := range newlyBlocking(refs, oldRefs) {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return admission.NewForbidden(a, err)
		}
		mapping, err := p.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
		if err != nil {
			return admission.NewForbidden(a, fmt.Errorf("cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion %s Kind %s: %v", ref.APIVersion, ref.Kind, err))
		}
		ns := ""
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns = a.GetNamespace()
		}
		fin := authorizer.AttributesRecord{
			User: a.GetUserInfo(), Verb: "update", Namespace: ns, Name: ref.Name,
			APIGroup: mapping.Resource.Group, APIVersion: mapping.Resource.Version, Resource: mapping.Resource.Resource,
			Subresource: "finalizers", ResourceRequest: true,
		}
		if d, reason, err := p.authz.Authorize(ctx, fin); d != authorizer.DecisionAllow {
			return admission.NewForbidden(a, fmt.Errorf("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: %v, %v", reason, err))
		}
	}
	return nil
}

// newlyBlocking returns the references that block owner deletion now but
// did not before.
func newlyBlocking(refs, old []metav1.OwnerReference) []metav1.OwnerReference {
	was := map[string]bool{}
	for _, r := range old {
		if r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
			was[string(r.UID)] = true
		}
	}
	var out []metav1.OwnerReference
	for _, r := range refs {
		if r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion && !was[string(r.UID)] {
			out = append(out, r)
		}
	}
	return out
}
