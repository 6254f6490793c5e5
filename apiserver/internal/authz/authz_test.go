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
	}{
		{"masters pass even AlwaysDeny", []string{"AlwaysDeny"}, "", get(master), authorizer.DecisionAllow},
		{"AlwaysDeny allows nothing", []string{"AlwaysDeny"}, "", get(someone), authorizer.DecisionNoOpinion},
		{"AlwaysAllow allows", []string{"AlwaysAllow"}, "", get(someone), authorizer.DecisionAllow},
		{"Node and RBAC with no policy have no opinion", []string{"Node", "RBAC"}, "", get(someone), authorizer.DecisionNoOpinion},
		{"Webhook builds from its kubeconfig", []string{"RBAC", "Webhook"}, webhookConfig, get(master), authorizer.DecisionAllow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.Modes, o.WebhookConfigFile = tc.modes, tc.webhook
			config := genericapiserver.NewConfig(scheme.Codecs)
			built, err := o.ApplyTo(config, informers.NewSharedInformerFactory(fake.NewClientset(), 0))
			if err != nil {
				t.Fatalf("ApplyTo: %v", err)
			}
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
