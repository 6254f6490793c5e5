package scheme

import (
	"fmt"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"trireme.dev/api/defaults"
	"trireme.dev/api/events"
	"trireme.dev/api/fieldselectors"
	"trireme.dev/api/hpaconversion"
)

// Group is one served API group: its single served version and how to
// register that version's types.
type Group struct {
	Version     schema.GroupVersion
	AddToScheme func(*runtime.Scheme) error
}

// Groups lists every API group version Trireme serves, one version per group:
// the k8s.io/api type of that version is also the group's in-memory (hub) type.
var Groups = []Group{
	{corev1.SchemeGroupVersion, corev1.AddToScheme},
	{appsv1.SchemeGroupVersion, appsv1.AddToScheme},
	{batchv1.SchemeGroupVersion, batchv1.AddToScheme},
	{autoscalingv2.SchemeGroupVersion, autoscalingv2.AddToScheme},
	{coordinationv1.SchemeGroupVersion, coordinationv1.AddToScheme},
	{discoveryv1.SchemeGroupVersion, discoveryv1.AddToScheme},
	{eventsv1.SchemeGroupVersion, eventsv1.AddToScheme},
	{schedulingv1.SchemeGroupVersion, schedulingv1.AddToScheme},
	{policyv1.SchemeGroupVersion, policyv1.AddToScheme},
	{networkingv1.SchemeGroupVersion, networkingv1.AddToScheme},
	{storagev1.SchemeGroupVersion, storagev1.AddToScheme},
	{nodev1.SchemeGroupVersion, nodev1.AddToScheme},
	{flowcontrolv1.SchemeGroupVersion, flowcontrolv1.AddToScheme},
	{resourcev1.SchemeGroupVersion, resourcev1.AddToScheme},
	{rbacv1.SchemeGroupVersion, rbacv1.AddToScheme},
	{authorizationv1.SchemeGroupVersion, authorizationv1.AddToScheme},
	{authenticationv1.SchemeGroupVersion, authenticationv1.AddToScheme},
	{admissionregistrationv1.SchemeGroupVersion, admissionregistrationv1.AddToScheme},
	{certificatesv1.SchemeGroupVersion, certificatesv1.AddToScheme},
	{storagemigrationv1.SchemeGroupVersion, storagemigrationv1.AddToScheme},
}

var (
	// Scheme holds the external and hub types of every served group.
	Scheme = New()
	// Codecs encodes and decodes every served type in JSON, YAML and protobuf.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters into option types.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

// eventKinds are the kinds whose hub is events.Event rather than the
// versioned type, because two groups share their store.
var eventKinds = map[string]bool{"Event": true, "EventList": true}

// New returns a scheme with every served group installed: external versions,
// the hub (internal) version of each, defaulting, field-label conversions and
// the query-parameter conversions of the option kinds.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := install(s); err != nil {
		panic(fmt.Sprintf("install scheme: %v", err))
	}
	return s
}

// NewExternal returns a scheme holding only the external versions, as the
// OpenAPI definition namer needs (an internal kind would be advertised as
// "__internal").
func NewExternal() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, g := range Groups {
		if err := g.AddToScheme(s); err != nil {
			panic(fmt.Sprintf("install %s: %v", g.Version, err))
		}
	}
	if err := autoscalingv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

func install(s *runtime.Scheme) error {
	for _, g := range Groups {
		if err := g.AddToScheme(s); err != nil {
			return fmt.Errorf("install %s: %w", g.Version, err)
		}
		if err := addHub(s, g); err != nil {
			return err
		}
		if err := s.SetVersionPriority(g.Version); err != nil {
			return err
		}
	}
	// Scale subresources speak autoscaling/v1, and autoscaling/v1 serves
	// HorizontalPodAutoscalers converted from the stored autoscaling/v2.
	scaleGV := autoscalingv1.SchemeGroupVersion
	s.AddKnownTypes(scaleGV, &autoscalingv1.Scale{}, &autoscalingv1.HorizontalPodAutoscaler{}, &autoscalingv1.HorizontalPodAutoscalerList{})
	metav1.AddToGroupVersion(s, scaleGV)
	s.AddKnownTypes(schema.GroupVersion{Group: scaleGV.Group, Version: runtime.APIVersionInternal}, &autoscalingv1.Scale{})
	if err := hpaconversion.AddConversions(s); err != nil {
		return err
	}
	if err := s.SetVersionPriority(autoscalingv2.SchemeGroupVersion, scaleGV); err != nil {
		return err
	}

	// Options and status kinds the generic server decodes with an empty group.
	unversioned := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(s, unversioned)
	s.AddUnversionedTypes(unversioned,
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})

	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, eventsv1.SchemeGroupVersion} {
		hub := schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}
		s.AddKnownTypes(hub, &events.Event{}, &events.EventList{})
	}
	if err := events.AddConversions(s); err != nil {
		return fmt.Errorf("install event conversions: %w", err)
	}
	if err := addQueryConversions(s); err != nil {
		return err
	}
	if err := defaults.AddToScheme(s); err != nil {
		return fmt.Errorf("install defaults: %w", err)
	}
	if err := fieldselectors.AddToScheme(s); err != nil {
		return fmt.Errorf("install field selectors: %w", err)
	}
	return nil
}

// addHub registers every kind of g's version under the group's internal
// version with the same Go type, so that conversion is a copy. Kinds from
// meta/v1 (options, WatchEvent) are left out: metav1 registers those itself.
func addHub(s *runtime.Scheme, g Group) error {
	tmp := runtime.NewScheme()
	if err := g.AddToScheme(tmp); err != nil {
		return err
	}
	metaPkg := reflect.TypeOf(metav1.Status{}).PkgPath()
	hub := schema.GroupVersion{Group: g.Version.Group, Version: runtime.APIVersionInternal}
	for kind, t := range tmp.KnownTypes(g.Version) {
		if t.PkgPath() == metaPkg || (g.Version.Group == "" || g.Version.Group == eventsv1.GroupName) && eventKinds[kind] {
			continue
		}
		obj, ok := reflect.New(t).Interface().(runtime.Object)
		if !ok {
			return fmt.Errorf("%s %s is not a runtime.Object", g.Version, kind)
		}
		s.AddKnownTypeWithName(hub.WithKind(kind), obj)
	}
	return nil
}
