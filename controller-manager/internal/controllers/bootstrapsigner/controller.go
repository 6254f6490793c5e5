// Package bootstrapsigner is the controller that signs the kubeconfig in
// ConfigMap kube-public/cluster-info with every bootstrap token usable for
// signing: a detached JWS per token, in key jws-kubeconfig-<token id>, by
// which a joining node that knows a token checks it talks to the right
// cluster. Off unless --controllers names it, as upstream.
package bootstrapsigner

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	bootstrapsecrets "k8s.io/cluster-bootstrap/util/secrets"

	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "bootstrapsigner"

// key is the one item the queue ever holds: there is one ConfigMap.
const key = "cluster-info"

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client reads cluster-info and the bootstrap token Secrets and writes
	// the signatures; the controller's own informers list through it.
	Client kubernetes.Interface
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Resync is the informers' resync period (--min-resync-period); 0
	// means they never resync.
	Resync time.Duration
}

// Controller signs cluster-info. It has informers of its own, limited to
// the two namespaces it may read.
type Controller struct {
	client     kubernetes.Interface
	recorder   record.EventRecorder
	public     informers.SharedInformerFactory
	system     informers.SharedInformerFactory
	configMaps corelisters.ConfigMapLister
	secrets    corelisters.SecretLister
	synced     []cache.InformerSynced
	loop       *worker.Loop
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	c := &Controller{client: o.Client, recorder: o.Recorder}
	c.public = informers.NewSharedInformerFactoryWithOptions(o.Client, o.Resync,
		informers.WithNamespace(metav1.NamespacePublic),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", bootstrapapi.ConfigMapClusterInfo).String()
		}))
	c.system = informers.NewSharedInformerFactoryWithOptions(o.Client, o.Resync,
		informers.WithNamespace(metav1.NamespaceSystem),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String()
		}))
	cms := c.public.Core().V1().ConfigMaps()
	secrets := c.system.Core().V1().Secrets()
	c.configMaps, c.secrets = cms.Lister(), secrets.Lister()
	c.synced = []cache.InformerSynced{cms.Informer().HasSynced, secrets.Informer().HasSynced}
	c.loop = worker.New(Name, c.sync)
	queue := func(any) { c.loop.Add(key) }
	handler := cache.ResourceEventHandlerFuncs{AddFunc: queue, UpdateFunc: func(_, o any) { queue(o) }, DeleteFunc: queue}
	if _, err := cms.Informer().AddEventHandler(handler); err != nil {
		return nil, fmt.Errorf("watch configmaps: %w", err)
	}
	if _, err := secrets.Informer().AddEventHandler(handler); err != nil {
		return nil, fmt.Errorf("watch secrets: %w", err)
	}
	return c, nil
}

// Run signs until ctx ends; one worker is all one ConfigMap needs.
func (c *Controller) Run(ctx context.Context, _ int) {
	c.public.Start(ctx.Done())
	c.system.Start(ctx.Done())
	defer c.public.Shutdown()
	defer c.system.Shutdown()
	c.loop.Run(ctx, 1, c.synced...)
}

func (c *Controller) sync(ctx context.Context, _ string) error {
	cm, err := c.configMaps.ConfigMaps(metav1.NamespacePublic).Get(bootstrapapi.ConfigMapClusterInfo)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get configmap cluster-info: %w", err)
	}
	content, ok := cm.Data[bootstrapapi.KubeConfigKey]
	if !ok {
		c.recorder.Eventf(cm, corev1.EventTypeWarning, "MissingKubeconfig", "ConfigMap has no %q key to sign", bootstrapapi.KubeConfigKey)
		return nil
	}
	tokens, err := c.signingTokens()
	if err != nil {
		return err
	}
	want := map[string]string{}
	for k, v := range cm.Data {
		if !strings.HasPrefix(k, bootstrapapi.JWSSignatureKeyPrefix) {
			want[k] = v
		}
	}
	for id, secret := range tokens {
		sig, err := jws.ComputeDetachedSignature(content, id, secret)
		if err != nil {
			return fmt.Errorf("sign cluster-info with token %s: %w", id, err)
		}
		want[bootstrapapi.JWSSignatureKeyPrefix+id] = sig
	}
	if maps.Equal(want, cm.Data) {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = want
	if _, err := c.client.CoreV1().ConfigMaps(metav1.NamespacePublic).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update configmap cluster-info: %w", err)
	}
	logr.FromContextOrDiscard(ctx).Info("Signed cluster-info", "tokens", len(tokens))
	return nil
}

// signingTokens returns id → secret of every unexpired token whose
// usage-bootstrap-signing is true; malformed tokens get a Warning Event
// and are skipped.
func (c *Controller) signingTokens() (map[string]string, error) {
	secrets, err := c.secrets.Secrets(metav1.NamespaceSystem).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list bootstrap tokens: %w", err)
	}
	now := time.Now()
	tokens := map[string]string{}
	for _, s := range secrets {
		if s.Type != bootstrapapi.SecretTypeBootstrapToken || s.DeletionTimestamp != nil {
			continue
		}
		if bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenUsageSigningKey) != "true" {
			continue
		}
		id := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenIDKey)
		secret := bootstrapsecrets.GetData(s, bootstrapapi.BootstrapTokenSecretKey)
		nameID, ok := bootstrapsecrets.ParseName(s.Name)
		if !ok || id == "" || secret == "" || nameID != id {
			c.recorder.Eventf(s, corev1.EventTypeWarning, "InvalidBootstrapToken", "Bootstrap token secret %s is malformed: its name must be bootstrap-token-<token-id> and it needs token-id and token-secret", s.Name)
			continue
		}
		if bootstrapsecrets.HasExpired(s, now) {
			continue
		}
		tokens[id] = secret
	}
	return tokens, nil
}
