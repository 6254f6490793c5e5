package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

const (
	// DefaultServiceAccountName is the account of pods that name none.
	DefaultServiceAccountName = "default"
	// MountPath is where the token, CA and namespace appear in containers.
	MountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// volumePrefix starts the injected volume's name; a random suffix
	// keeps it from clashing with the pod's own volumes.
	volumePrefix = "kube-api-access-"
	// tokenExpirationSeconds is a little over an hour: kubelets refresh at
	// 80%, and the odd seconds let audits tell injected tokens apart.
	tokenExpirationSeconds = 3607
	// rootCAConfigMap is published in every namespace by the
	// root-ca-cert-publisher controller.
	rootCAConfigMap = "kube-root-ca.crt"
	// mirrorPodAnnotation marks the API copy of a kubelet's static pod.
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// Plugin assigns service accounts and mounts their tokens.
type Plugin struct {
	*admission.Handler
	client kubernetes.Interface
	lister corelisters.ServiceAccountLister
	// generateName makes the volume's random suffix; tests fix it.
	generateName func(string) string
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

func newPlugin() *Plugin {
	return &Plugin{
		Handler:      admission.NewHandler(admission.Create),
		generateName: names.SimpleNameGenerator.GenerateName,
	}
}

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Core().V1().ServiceAccounts()
	p.lister = inf.Lister()
	p.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil || p.client == nil {
		return errors.New("ServiceAccount needs a client and an informer factory")
	}
	return nil
}

func podOf(a admission.Attributes) (*corev1.Pod, bool) {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil, false
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	return pod, ok
}

func isMirror(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[mirrorPodAnnotation]
	return ok
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok || isMirror(pod) {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
	}
	sa, err := p.account(ctx, a.GetNamespace(), pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.GetNamespace(), pod.Spec.ServiceAccountName, err))
	}
	if automount(pod, sa) {
		p.mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	return nil
}

// Validate implements admission.ValidationInterface: a later mutating
// plugin or webhook must not leave a pod without a service account, and
// mirror pods may not use the API's credentials at all.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	if isMirror(pod) {
		if pod.Spec.ServiceAccountName != "" {
			return admission.NewForbidden(a, errors.New("a mirror pod may not reference service accounts"))
		}
		for _, v := range pod.Spec.Volumes {
			if v.Secret != nil {
				return admission.NewForbidden(a, fmt.Errorf("volume %s: a mirror pod may not reference secrets", v.Name))
			}
			if v.Projected != nil {
				return admission.NewForbidden(a, fmt.Errorf("volume %s: a mirror pod may not use projected volumes", v.Name))
			}
		}
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, errors.New("no service account specified for pod"))
	}
	if _, err := p.account(ctx, a.GetNamespace(), pod.Spec.ServiceAccountName); err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.GetNamespace(), pod.Spec.ServiceAccountName, err))
	}
	return nil
}

// account finds a service account in the cache, then live: an account
// created just before its first pod is often not cached yet. The live read
// is retried briefly since the serviceaccount controller creates "default"
// right after the namespace.
func (p *Plugin) account(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	if p.WaitForReady() {
		if sa, err := p.lister.ServiceAccounts(namespace).Get(name); err == nil {
			return sa, nil
		}
	}
	var sa *corev1.ServiceAccount
	var lastErr error
	backoff := wait.Backoff{Steps: 3, Duration: 50 * time.Millisecond, Factor: 2}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		got, err := p.client.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			sa = got
			return true, nil
		case apierrors.IsNotFound(err):
			lastErr = err
			return false, nil
		default:
			return false, err
		}
	})
	if sa != nil {
		return sa, nil
	}
	if lastErr != nil {
		// Upstream names the resource in the singular here; users grep for it.
		return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
	}
	return nil, err
}

// automount follows the pod's choice, then the account's; default yes.
func automount(pod *corev1.Pod, sa *corev1.ServiceAccount) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountToken adds the projected token volume and mounts it, read-only, in
// every container that does not mount something there already.
func (p *Plugin) mountToken(pod *corev1.Pod) {
	name := ""
	for _, v := range pod.Spec.Volumes {
		if isTokenVolume(&v) {
			name = v.Name
			break
		}
	}
	if name == "" {
		name = p.uniqueName(pod)
		pod.Spec.Volumes = append(pod.Spec.Volumes, tokenVolume(name))
	}
	mount := func(c *corev1.Container) {
		for _, m := range c.VolumeMounts {
			if m.MountPath == MountPath {
				return
			}
		}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: MountPath})
	}
	for i := range pod.Spec.InitContainers {
		mount(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		mount(&pod.Spec.Containers[i])
	}
}

func (p *Plugin) uniqueName(pod *corev1.Pod) string {
	taken := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		taken[v.Name] = true
	}
	for {
		if n := p.generateName(volumePrefix); !taken[n] {
			return n
		}
	}
}

// isTokenVolume recognises a volume this plugin injected before (a pod
// re-submitted from a dump keeps it).
func isTokenVolume(v *corev1.Volume) bool {
	if v.Projected == nil || len(v.Name) <= len(volumePrefix) || v.Name[:len(volumePrefix)] != volumePrefix {
		return false
	}
	for _, s := range v.Projected.Sources {
		if s.ServiceAccountToken != nil && s.ServiceAccountToken.Path == "token" {
			return true
		}
	}
	return false
}

func tokenVolume(name string) corev1.Volume {
	return corev1.Volume{
		Name: name,
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: new(int32(corev1.ProjectedVolumeSourceDefaultMode)),
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					ExpirationSeconds: new(int64(tokenExpirationSeconds)),
					Path:              "token",
				}},
				{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap},
					Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				}},
				{DownwardAPI: &corev1.DownwardAPIProjection{
					Items: []corev1.DownwardAPIVolumeFile{{
						Path:     "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
					}},
				}},
			},
		}},
	}
}
