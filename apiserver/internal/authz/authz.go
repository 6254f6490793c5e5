// Package authz builds the apiserver's authorizer from its flags: the
// --authorization-mode chain (Node, RBAC, Webhook, AlwaysAllow, AlwaysDeny)
// behind a system:masters authorizer that no mode can override, as
// upstream orders it. Subpackages hold the RBAC and Node authorizers and
// the default RBAC policy; policy.go keeps that policy in place.
package authz

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authorizationcel "k8s.io/apiserver/pkg/authorization/cel"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/plugin/pkg/authorizer/webhook"
	webhookmetrics "k8s.io/apiserver/plugin/pkg/authorizer/webhook/metrics"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/apiserver/internal/authz/node"
	"trireme.dev/apiserver/internal/authz/rbac"
)

// Authorization modes.
const (
	ModeNode        = "Node"
	ModeRBAC        = "RBAC"
	ModeWebhook     = "Webhook"
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
)

var modes = []string{ModeNode, ModeRBAC, ModeWebhook, ModeAlwaysAllow, ModeAlwaysDeny}

// Options are the authorization flags.
type Options struct {
	// Modes are the authorizers, in the order they are asked.
	Modes []string
	// WebhookConfigFile is the kubeconfig of the Webhook mode's service.
	WebhookConfigFile string
	// WebhookVersion is the SubjectAccessReview version the webhook speaks.
	WebhookVersion string
	// WebhookCacheAuthorizedTTL and WebhookCacheUnauthorizedTTL are how long
	// webhook answers are cached.
	WebhookCacheAuthorizedTTL, WebhookCacheUnauthorizedTTL time.Duration
}

// NewOptions returns the defaults: Node then RBAC, as kubeadm configures.
func NewOptions() *Options {
	return &Options{
		Modes:                       []string{ModeNode, ModeRBAC},
		WebhookVersion:              "v1beta1",
		WebhookCacheAuthorizedTTL:   5 * time.Minute,
		WebhookCacheUnauthorizedTTL: 30 * time.Second,
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Modes, "authorization-mode", o.Modes, "Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: "+strings.Join(modes, ",")+".")
	fs.StringVar(&o.WebhookConfigFile, "authorization-webhook-config-file", o.WebhookConfigFile, "File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. The API server will query the remote service to determine access on the API server's secure port.")
	fs.StringVar(&o.WebhookVersion, "authorization-webhook-version", o.WebhookVersion, "The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.")
	fs.DurationVar(&o.WebhookCacheAuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.WebhookCacheAuthorizedTTL, "The duration to cache 'authorized' responses from the webhook authorizer.")
	fs.DurationVar(&o.WebhookCacheUnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.WebhookCacheUnauthorizedTTL, "The duration to cache 'unauthorized' responses from the webhook authorizer.")
}

// Validate reports every invalid option.
func (o *Options) Validate() []error {
	var errs []error
	if len(o.Modes) == 0 {
		errs = append(errs, fmt.Errorf("--authorization-mode: at least one mode is required"))
	}
	seen := map[string]bool{}
	for _, m := range o.Modes {
		if !slices.Contains(modes, m) {
			errs = append(errs, fmt.Errorf("--authorization-mode: unknown mode %q, want one of %s", m, strings.Join(modes, ",")))
		}
		if seen[m] {
			errs = append(errs, fmt.Errorf("--authorization-mode: %q given twice", m))
		}
		seen[m] = true
	}
	if seen[ModeWebhook] != (o.WebhookConfigFile != "") {
		errs = append(errs, fmt.Errorf("--authorization-webhook-config-file is required with, and only with, --authorization-mode=Webhook"))
	}
	return errs
}

// Built are the authorizers ApplyTo made, for the parts of the server that
// check permissions themselves.
type Built struct {
	// RBAC resolves RBAC rules for the RBAC registry's escalation checks.
	// It exists even when the RBAC mode is off: upstream guards RBAC writes
	// whatever the authorization mode.
	RBAC *rbac.Authorizer
}

// ApplyTo sets config's authorizer and rule resolver. The RBAC and Node
// modes read informers of factory, which must be started afterwards.
func (o *Options) ApplyTo(config *genericapiserver.Config, factory informers.SharedInformerFactory) (*Built, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("authorization: %v", errs)
	}
	built := &Built{}
	// Members of system:masters are allowed before any mode is asked, so no
	// policy mistake can lock the cluster's superusers out.
	authorizers := []union.NamedAuthorizer{{AuthorizerName: "privileged-groups", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)}}
	var resolvers []authorizer.RuleResolver
	// synced are the informers the modes decide from (RBAC's and Node's).
	var synced []cache.InformerSynced
	for _, mode := range o.Modes {
		a, r, err := o.build(mode, factory, built)
		if err != nil {
			return nil, fmt.Errorf("authorization mode %s: %w", mode, err)
		}
		authorizers = append(authorizers, union.NamedAuthorizer{AuthorizerName: mode, Authorizer: a})
		resolvers = append(resolvers, r)
		if s, ok := a.(interface{ Synced() []cache.InformerSynced }); ok {
			synced = append(synced, s.Synced()...)
		}
	}
	if built.RBAC == nil {
		var err error
		if built.RBAC, err = rbac.NewFromInformers(factory); err != nil {
			return nil, fmt.Errorf("authorization: %w", err)
		}
	}
	a, err := union.New(authorizers...)
	if err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	config.Authorization.Authorizer = newStartupGate(a, synced, StartupWait)
	config.RuleResolver = union.NewRuleResolvers(resolvers...)
	return built, nil
}

type authorizerResolver interface {
	authorizer.Authorizer
	authorizer.RuleResolver
}

func (o *Options) build(mode string, factory informers.SharedInformerFactory, built *Built) (authorizer.Authorizer, authorizer.RuleResolver, error) {
	var a authorizerResolver
	var err error
	switch mode {
	case ModeNode:
		a, err = node.NewFromInformers(factory)
	case ModeRBAC:
		built.RBAC, err = rbac.NewFromInformers(factory)
		a = built.RBAC
	case ModeWebhook:
		a, err = o.webhook()
	case ModeAlwaysAllow:
		a = authorizerfactory.NewAlwaysAllowAuthorizer()
	case ModeAlwaysDeny:
		a = authorizerfactory.NewAlwaysDenyAuthorizer()
	default:
		err = fmt.Errorf("unknown mode")
	}
	if err != nil {
		return nil, nil, err
	}
	return a, a, nil
}

func (o *Options) webhook() (*webhook.WebhookAuthorizer, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.WebhookConfigFile)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", o.WebhookConfigFile, err)
	}
	// Retry as upstream does: a webhook restart should not fail requests.
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	return webhook.New(cfg, o.WebhookVersion, o.WebhookCacheAuthorizedTTL, o.WebhookCacheUnauthorizedTTL,
		backoff, authorizer.DecisionNoOpinion, nil, "webhook", webhookmetrics.NoopAuthorizerMetrics{}, authorizationcel.NewDefaultCompiler())
}
