// Package extapiserver is a minimal extension apiserver built on
// k8s.io/apiserver, as metrics-server and other aggregated APIs are: it
// serves one read-only, cluster-scoped resource (flunders in
// wardle.e2e.trireme.dev/v1) from memory, and authenticates and authorizes
// every request by delegating to the cluster's apiserver — the request
// headers of the front proxy, checked against the CA published in
// kube-system/extension-apiserver-authentication, then SubjectAccessReviews.
package extapiserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/component-base/compatibility"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	apiopenapi "trireme.dev/api/openapi"
)

// Group is the API group the server serves.
const Group = "wardle.e2e.trireme.dev"

// GroupVersion is the served group version.
var GroupVersion = schema.GroupVersion{Group: Group, Version: "v1"}

// Flunder is the one served kind.
type Flunder struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FlunderSpec `json:"spec"`
}

// FlunderSpec is what a Flunder holds.
type FlunderSpec struct {
	Reference string `json:"reference,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (f *Flunder) DeepCopyObject() runtime.Object {
	out := *f
	f.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// FlunderList is a list of Flunders.
type FlunderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Flunder `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (l *FlunderList) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]Flunder, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Flunder)
	}
	return &out
}

// modelPrefix names the served types in OpenAPI, as upstream names its own
// (io.k8s.api.core.v1.Pod): the group reversed, the version, the kind.
const modelPrefix = "dev.trireme.e2e.wardle.v1."

// OpenAPIModelName is the type's name in OpenAPI.
func (Flunder) OpenAPIModelName() string { return modelPrefix + "Flunder" }

// OpenAPIModelName is the type's name in OpenAPI.
func (FlunderSpec) OpenAPIModelName() string { return modelPrefix + "FlunderSpec" }

// OpenAPIModelName is the type's name in OpenAPI.
func (FlunderList) OpenAPIModelName() string { return modelPrefix + "FlunderList" }

// Options say where the server listens and how it reaches the cluster.
type Options struct {
	// Kubeconfig reaches the cluster's apiserver for delegated
	// authentication and authorization.
	Kubeconfig string
	// Listener is where the server serves HTTPS.
	Listener net.Listener
	// CertDir receives the generated serving certificate.
	CertDir string
	// ServiceName is the DNS name the aggregator verifies the serving
	// certificate against: <service>.<namespace>.svc.
	ServiceName string
	// Flunders are the objects served.
	Flunders []string
}

// Server is a built extension apiserver.
type Server struct {
	srv *genericapiserver.GenericAPIServer
	// CABundle verifies the serving certificate; it goes in the
	// APIService's spec.caBundle.
	CABundle []byte
}

// New builds the server.
func New(o Options) (*Server, error) {
	scheme := runtime.NewScheme()
	// The served version doubles as the internal one, as the server
	// converts nothing.
	internal := schema.GroupVersion{Group: Group, Version: runtime.APIVersionInternal}
	scheme.AddKnownTypes(GroupVersion, &Flunder{}, &FlunderList{})
	scheme.AddKnownTypes(internal, &Flunder{}, &FlunderList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := metainternalversion.AddToScheme(scheme); err != nil {
		return nil, err
	}
	codecs := serializer.NewCodecFactory(scheme)

	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(o.ServiceName, []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	certFile, keyFile := filepath.Join(o.CertDir, "tls.crt"), filepath.Join(o.CertDir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}

	config := genericapiserver.NewConfig(codecs)
	config.EffectiveVersion = compatibility.NewEffectiveVersionFromString("1.37", "", "")
	namer := openapinamer.NewDefinitionNamer(scheme)
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openAPIDefinitions, namer)
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openAPIDefinitions, namer)
	secure := genericoptions.NewSecureServingOptions().WithLoopback()
	secure.Listener = o.Listener
	secure.BindPort = o.Listener.Addr().(*net.TCPAddr).Port
	secure.ServerCert.CertKey = genericoptions.CertKey{CertFile: certFile, KeyFile: keyFile}
	if err := secure.ApplyTo(&config.SecureServing, &config.LoopbackClientConfig); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}
	authn := genericoptions.NewDelegatingAuthenticationOptions()
	authn.RemoteKubeConfigFile = o.Kubeconfig
	if err := authn.ApplyTo(&config.Authentication, config.SecureServing, nil); err != nil {
		return nil, fmt.Errorf("delegated authentication: %w", err)
	}
	authz := genericoptions.NewDelegatingAuthorizationOptions()
	authz.RemoteKubeConfigFile = o.Kubeconfig
	if err := authz.ApplyTo(&config.Authorization); err != nil {
		return nil, fmt.Errorf("delegated authorization: %w", err)
	}
	srv, err := config.Complete(nil).New("wardle-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("create server: %w", err)
	}
	info := genericapiserver.NewDefaultAPIGroupInfo(Group, scheme, runtime.NewParameterCodec(scheme), codecs)
	info.VersionedResourcesStorageMap[GroupVersion.Version] = map[string]rest.Storage{"flunders": newStorage(o.Flunders)}
	if err := srv.InstallAPIGroup(&info); err != nil {
		return nil, fmt.Errorf("install %s: %w", Group, err)
	}
	return &Server{srv: srv, CABundle: certPEM}, nil
}

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	return s.srv.PrepareRun().RunWithContext(ctx)
}

// storage serves a fixed list of Flunders.
type storage struct {
	rest.TableConvertor
	items []Flunder
}

var (
	_ rest.Getter               = (*storage)(nil)
	_ rest.Lister               = (*storage)(nil)
	_ rest.Scoper               = (*storage)(nil)
	_ rest.SingularNameProvider = (*storage)(nil)
)

func newStorage(names []string) *storage {
	s := &storage{TableConvertor: rest.NewDefaultTableConvertor(GroupVersion.WithResource("flunders").GroupResource())}
	for i, n := range names {
		s.items = append(s.items, Flunder{
			ObjectMeta: metav1.ObjectMeta{Name: n, UID: types.UID("flunder-" + strconv.Itoa(i)), ResourceVersion: "1", CreationTimestamp: metav1.Now()},
			Spec:       FlunderSpec{Reference: "e2e"},
		})
	}
	return s
}

func (s *storage) New() runtime.Object     { return &Flunder{} }
func (s *storage) NewList() runtime.Object { return &FlunderList{} }
func (s *storage) Destroy()                {}
func (s *storage) NamespaceScoped() bool   { return false }
func (s *storage) GetSingularName() string { return "flunder" }

// Get returns the named Flunder.
func (s *storage) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	for i := range s.items {
		if s.items[i].Name == name {
			return s.items[i].DeepCopyObject(), nil
		}
	}
	return nil, apiNotFound(name)
}

// List returns every Flunder; selectors are not supported.
func (s *storage) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	l := &FlunderList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range s.items {
		l.Items = append(l.Items, *s.items[i].DeepCopyObject().(*Flunder))
	}
	return l, nil
}

func apiNotFound(name string) error {
	return apierrors.NewNotFound(GroupVersion.WithResource("flunders").GroupResource(), name)
}

// openAPIDefinitions are the models of the served types, which server-side
// apply and kubectl explain need, beside the API machinery's.
func openAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := apiopenapi.GetOpenAPIDefinitions(ref)
	str := func(desc string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, Description: desc}}
	}
	object := func(desc string, props map[string]spec.Schema, deps ...string) common.OpenAPIDefinition {
		return common.OpenAPIDefinition{
			Schema:       spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Description: desc, Properties: props}},
			Dependencies: deps,
		}
	}
	refTo := func(name string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(name), Default: map[string]any{}}}
	}
	defs[Flunder{}.OpenAPIModelName()] = object("A Flunder is the one kind the e2e extension apiserver serves.", map[string]spec.Schema{
		"apiVersion": str("APIVersion of the object."),
		"kind":       str("Kind of the object."),
		"metadata":   refTo(metav1.ObjectMeta{}.OpenAPIModelName()),
		"spec":       refTo(FlunderSpec{}.OpenAPIModelName()),
	}, metav1.ObjectMeta{}.OpenAPIModelName(), FlunderSpec{}.OpenAPIModelName())
	defs[FlunderSpec{}.OpenAPIModelName()] = object("What a Flunder holds.", map[string]spec.Schema{
		"reference": str("Reference names whatever the Flunder refers to."),
	})
	list := object("A list of Flunders.", map[string]spec.Schema{
		"apiVersion": str("APIVersion of the list."),
		"kind":       str("Kind of the list."),
		"metadata":   refTo(metav1.ListMeta{}.OpenAPIModelName()),
		"items": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{
			SchemaProps: spec.SchemaProps{Ref: ref(Flunder{}.OpenAPIModelName()), Default: map[string]any{}}}}}},
	}, metav1.ListMeta{}.OpenAPIModelName(), Flunder{}.OpenAPIModelName())
	defs[FlunderList{}.OpenAPIModelName()] = list
	return defs
}
