package authz

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/api/scheme"
)

func TestApplyToChains(t *testing.T) {
	webhookConfig := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	if err := os.WriteFile(webhookConfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: w, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: w, user: {}}]
contexts: [{name: w, context: {cluster: w, user: w}}]
current-context: w
`), 0o600); err != nil {
		t.Fatal(err)
	}
	master := &user.DefaultInfo{Name: "root", Groups: []string{user.SystemPrivilegedGroup}}
	someone := &user.DefaultInfo{Name: "someone", Groups: []string{user.AllAuthenticated}}
	get := func(u user.Info) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: "get", Resource: "pods", Namespace: "x", ResourceRequest: true}
	}
	for _, tc := range []struct {
		name    string
		modes   []string
		webhook string
		attrs   authorizer.AttributesRecord
		want    authorizer.Decision
		// gated is how many informers a refused request waits for.
		gated int
	}{
		{"masters pass even AlwaysDeny", []string{"AlwaysDeny"}, "", get(master), authorizer.DecisionAllow, 0},
		{"AlwaysDeny allows nothing", []string{"AlwaysDeny"}, "", get(someone), authorizer.DecisionNoOpinion, 0},
		{"AlwaysAllow allows", []string{"AlwaysAllow"}, "", get(someone), authorizer.DecisionAllow, 0},
		{"Node and RBAC with no policy have no opinion", []string{"Node", "RBAC"}, "", get(someone), authorizer.DecisionNoOpinion, 8},
		{"Webhook builds from its kubeconfig", []string{"RBAC", "Webhook"}, webhookConfig, get(master), authorizer.DecisionAllow, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.Modes, o.WebhookConfigFile = tc.modes, tc.webhook
			config := genericapiserver.NewConfig(scheme.Codecs)
			factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
			built, err := o.ApplyTo(config, factory)
			if err != nil {
				t.Fatalf("ApplyTo: %v", err)
			}
			if g := config.Authorization.Authorizer.(*startupGate); len(g.synced) != tc.gated {
				t.Errorf("refusals wait for %d informers, want %d", len(g.synced), tc.gated)
			}
			factory.Start(t.Context().Done())
			factory.WaitForCacheSync(t.Context().Done())
			if built.RBAC == nil || config.RuleResolver == nil {
				t.Errorf("RBAC resolver or rule resolver not set")
			}
			got, _, _ := config.Authorization.Authorizer.Authorize(context.Background(), tc.attrs)
			if got != tc.want {
				t.Errorf("decision = %v, want %v", got, tc.want)
			}
		})
	}
}
