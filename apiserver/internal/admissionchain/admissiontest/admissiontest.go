// Package admissiontest sets admission plugins up for unit tests: a fake
// clientset holding the given objects, a started informer factory over it,
// and the plugin's initialization checked, as the admission initializer
// and the server's start would do.
package admissiontest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

// Init hands p a fake clientset of objects and an informer factory over
// it (whichever of the two p wants), validates p's initialization, and
// returns the clientset once the informers have synced. The informers stop
// when t ends.
func Init(t testing.TB, p admission.Interface, objects ...runtime.Object) *fake.Clientset {
	t.Helper()
	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	if w, ok := p.(genericinitializer.WantsExternalKubeClientSet); ok {
		w.SetExternalKubeClientSet(client)
	}
	if w, ok := p.(genericinitializer.WantsExternalKubeInformerFactory); ok {
		w.SetExternalKubeInformerFactory(factory)
	}
	if v, ok := p.(admission.InitializationValidator); ok {
		if err := v.ValidateInitialization(); err != nil {
			t.Fatalf("initialize plugin: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return client
}

// Grants is an authorizer that allows exactly its entries, each written
// "verb resource[/subresource]" for any name or "verb resource name" for
// one: {"delete pods": true, "attest signers example.com/foo": true}.
type Grants map[string]bool

// Authorizer returns g as an authorizer.Authorizer.
func (g Grants) Authorizer() authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		key := a.GetVerb() + " " + a.GetResource()
		if a.GetSubresource() != "" {
			key += "/" + a.GetSubresource()
		}
		if g[key] || (a.GetName() != "" && g[key+" "+a.GetName()]) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
}

// Admit runs a through p as the admission chain does: p's mutation, then,
// if that passed, its validation (each only if p has one).
func Admit(p admission.Interface, a admission.Attributes) error {
	if m, ok := p.(admission.MutationInterface); ok {
		if err := m.Admit(context.Background(), a, nil); err != nil {
			return err
		}
	}
	if v, ok := p.(admission.ValidationInterface); ok {
		return v.Validate(context.Background(), a, nil)
	}
	return nil
}

// ErrorWanted checks err against want, a part of the expected error's
// message ("": none expected), and fails t on a mismatch. It reports
// whether an error was expected, so a table test's case ends there.
func ErrorWanted(t testing.TB, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want %q", err, want)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}
