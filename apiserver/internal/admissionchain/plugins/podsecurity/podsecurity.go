package podsecurity

import (
	"context"
	"errors"
	"fmt"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/component-base/metrics/legacyregistry"
	psadmission "k8s.io/pod-security-admission/admission"
	psconfig "k8s.io/pod-security-admission/admission/api"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"
)

// Plugin adapts the pod-security-admission library to the apiserver's
// admission interface.
type Plugin struct {
	*admission.Handler
	delegate *psadmission.Admission
	client   kubernetes.Interface
	nsLister corelisters.NamespaceLister
	pods     corelisters.PodLister
}

var (
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// The metrics recorder registers process-wide collectors, so only once.
var (
	recorderOnce sync.Once
	recorder     *psmetrics.PrometheusRecorder
)

func metricsRecorder() *psmetrics.PrometheusRecorder {
	recorderOnce.Do(func() {
		recorder = psmetrics.NewPrometheusRecorder(psapi.GetAPIVersion())
		recorder.MustRegister(legacyregistry.MustRegister)
	})
	return recorder
}

func newPlugin(cfg *psconfig.PodSecurityConfiguration) (*Plugin, error) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("build pod security evaluator: %w", err)
	}
	p := &Plugin{
		Handler: admission.NewHandler(admission.Create, admission.Update),
	}
	p.delegate = &psadmission.Admission{
		Configuration:    cfg,
		Evaluator:        evaluator,
		Metrics:          metricsRecorder(),
		PodSpecExtractor: psadmission.DefaultPodSpecExtractor{},
		NamespaceGetter:  namespaceGetter{p},
		PodLister:        podLister{p},
	}
	if err := p.delegate.CompleteConfiguration(); err != nil {
		return nil, fmt.Errorf("complete PodSecurity configuration: %w", err)
	}
	return p, nil
}

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	ns := f.Core().V1().Namespaces()
	pods := f.Core().V1().Pods()
	p.nsLister, p.pods = ns.Lister(), pods.Lister()
	p.SetReadyFunc(func() bool { return ns.Informer().HasSynced() && pods.Informer().HasSynced() })
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.client == nil || p.nsLister == nil {
		return errors.New("PodSecurity needs a client and an informer factory")
	}
	return p.delegate.ValidateConfiguration()
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gr := a.GetResource().GroupResource()
	if gr != corev1.Resource("namespaces") && gr != corev1.Resource("pods") && !p.delegate.PodSpecExtractor.HasPodSpec(gr) {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	res := p.delegate.Validate(ctx, attributes{a})
	for _, w := range res.Warnings {
		warning.AddWarning(ctx, "", w)
	}
	for k, v := range res.AuditAnnotations {
		audit.AddAuditAnnotation(ctx, psapi.AuditAnnotationPrefix+k, v)
	}
	if res.Allowed {
		return nil
	}
	// The library's status carries upstream's message ("violates
	// PodSecurity ..."); keep it whole rather than rewrapping it.
	//lint:ignore ST1005 upstream's message, word for word: clients match on it.
	err := admission.NewForbidden(a, errors.New("Not allowed by PodSecurity")).(*apierrors.StatusError)
	if r := res.Result; r != nil {
		if r.Message != "" {
			err.ErrStatus.Message = r.Message
		}
		if r.Reason != "" {
			err.ErrStatus.Reason = r.Reason
		}
		if r.Details != nil {
			err.ErrStatus.Details = r.Details
		}
		if r.Code != 0 {
			err.ErrStatus.Code = r.Code
		}
	}
	return err
}

// attributes presents admission attributes as the library reads them. Our
// in-memory objects are already the v1 types it expects.
type attributes struct{ admission.Attributes }

func (a attributes) GetOperation() admissionv1.Operation {
	return admissionv1.Operation(a.Attributes.GetOperation())
}

func (a attributes) GetObject() (runtime.Object, error) { return a.Attributes.GetObject(), nil }

func (a attributes) GetOldObject() (runtime.Object, error) { return a.Attributes.GetOldObject(), nil }

func (a attributes) GetUserName() string {
	if u := a.GetUserInfo(); u != nil {
		return u.GetName()
	}
	return ""
}

// namespaceGetter reads namespaces from the cache, falling back to a live
// read for one created a moment ago.
type namespaceGetter struct{ p *Plugin }

func (g namespaceGetter) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := g.p.nsLister.Get(name)
	if apierrors.IsNotFound(err) {
		return g.p.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	}
	return ns, err
}

// podLister lists a namespace's pods from the cache, for the warnings a
// namespace label change gives about pods that would now be refused.
type podLister struct{ p *Plugin }

func (l podLister) ListPods(_ context.Context, namespace string) ([]*corev1.Pod, error) {
	return l.p.pods.Pods(namespace).List(labels.Everything())
}
