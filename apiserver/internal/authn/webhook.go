package authn

import (
	"time"

	"fmt"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
)

// webhook builds the TokenReview webhook authenticator from its kubeconfig.
func (o *Options) webhook() (authenticator.Token, error) {
	cfg, err := webhookutil.LoadKubeconfig(o.WebhookConfigFile, nil)
	if err != nil {
		return nil, fmt.Errorf("--authentication-token-webhook-config-file: %w", err)
	}
	t, err := webhook.New(cfg, "v1", o.apiAudiences(), webhookutil.DefaultRetryBackoffWithInitialDelay(500*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("token webhook: %w", err)
	}
	return t, nil
}
