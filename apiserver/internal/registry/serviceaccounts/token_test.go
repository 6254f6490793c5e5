package serviceaccounts

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"trireme.dev/apiserver/internal/authn/satoken"
)

// mapGetter serves objects by name.
type mapGetter map[string]runtime.Object

func (m mapGetter) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if o, ok := m[name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, name)
}

// recordingSigner remembers the last request instead of signing.
type recordingSigner struct{ last satoken.Request }

func (r *recordingSigner) Sign(req satoken.Request) (string, time.Time, error) {
	r.last = req
	return "signed", time.Unix(1000, 0).Add(req.Lifetime), nil
}

func int64p(v int64) *int64 { return &v }

func newStore() (*TokenStore, *recordingSigner) {
	signer := &recordingSigner{}
	return &TokenStore{
		ServiceAccounts: mapGetter{"default": &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "sa-uid"}}},
		Pods: mapGetter{
			"web":          &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "pod-uid"}, Spec: corev1.PodSpec{ServiceAccountName: "default"}},
			"other":        &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "o"}, Spec: corev1.PodSpec{ServiceAccountName: "builder"}},
			"on-n1":        &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-n1", UID: "p1"}, Spec: corev1.PodSpec{ServiceAccountName: "default", NodeName: "n1"}},
			"on-gone-node": &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-gone-node", UID: "p2"}, Spec: corev1.PodSpec{ServiceAccountName: "default", NodeName: "gone"}},
		},
		Secrets:       mapGetter{"s": &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: "secret-uid"}}},
		Nodes:         mapGetter{"n1": &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}},
		Signer:        signer,
		APIAudiences:  []string{"https://kubernetes.default.svc.cluster.local"},
		MaxExpiration: 24 * time.Hour,
	}, signer
}

func TestTokenStoreCreate(t *testing.T) {
	tests := []struct {
		name      string
		saName    string
		spec      authenticationv1.TokenRequestSpec
		dryRun    bool
		wantErr   func(error) bool
		wantLife  time.Duration
		wantAuds  []string
		wantBound string
	}{
		{name: "defaults to one hour and the API audience", saName: "default", wantLife: time.Hour, wantAuds: []string{"https://kubernetes.default.svc.cluster.local"}},
		{name: "explicit duration and audience", saName: "default", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: int64p(600), Audiences: []string{"vault"}}, wantLife: 10 * time.Minute, wantAuds: []string{"vault"}},
		{name: "capped at the maximum", saName: "default", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: int64p(7 * 24 * 3600)}, wantLife: 24 * time.Hour},
		{name: "under ten minutes is invalid", saName: "default", spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: int64p(599)}, wantErr: apierrors.IsInvalid},
		{name: "empty audience is invalid", saName: "default", spec: authenticationv1.TokenRequestSpec{Audiences: []string{""}}, wantErr: apierrors.IsInvalid},
		{name: "missing service account", saName: "ghost", wantErr: apierrors.IsNotFound},
		{name: "bound to its pod", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "web"}}, wantLife: time.Hour, wantBound: "pod:web/pod-uid"},
		{name: "a scheduled pod's token names its node", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "on-n1"}}, wantLife: time.Hour, wantBound: "pod:on-n1/p1 node:n1/node-uid"},
		{name: "an unreadable node is named without UID", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "on-gone-node"}}, wantLife: time.Hour, wantBound: "pod:on-gone-node/p2 node:gone/"},
		{name: "bound to a secret", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s", UID: "secret-uid"}}, wantLife: time.Hour, wantBound: "secret:s/secret-uid"},
		{name: "bound to a node", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "n1"}}, wantLife: time.Hour, wantBound: "node:n1/node-uid"},
		{name: "pod of another service account", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "other"}}, wantErr: apierrors.IsBadRequest},
		{name: "stale bound UID", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s", UID: "old"}}, wantErr: apierrors.IsConflict},
		{name: "missing bound object", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "gone"}}, wantErr: apierrors.IsNotFound},
		{name: "unsupported bound kind", saName: "default", spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "c"}}, wantErr: apierrors.IsInvalid},
		{name: "dry run signs nothing", saName: "default", dryRun: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store, signer := newStore()
			ctx := genericapirequest.WithNamespace(context.Background(), "demo")
			opts := &metav1.CreateOptions{}
			if tc.dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			obj, err := store.Create(ctx, tc.saName, &authenticationv1.TokenRequest{Spec: tc.spec}, nil, opts)
			if tc.wantErr != nil {
				if err == nil || !tc.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := obj.(*authenticationv1.TokenRequest)
			if tc.dryRun {
				if out.Status.Token != "" || signer.last.Name != "" {
					t.Fatal("dry run issued a token")
				}
				return
			}
			if out.Status.Token != "signed" || out.Name != tc.saName || out.Namespace != "demo" {
				t.Fatalf("response = %+v", out)
			}
			r := signer.last
			if r.Namespace != "demo" || r.Name != "default" || r.UID != "sa-uid" || r.Lifetime != tc.wantLife {
				t.Errorf("sign request = %+v", r)
			}
			if tc.wantAuds != nil && strings.Join(r.Audiences, ",") != strings.Join(tc.wantAuds, ",") {
				t.Errorf("audiences = %v, want %v", r.Audiences, tc.wantAuds)
			}
			if got := boundOf(r); got != tc.wantBound {
				t.Errorf("bound = %q, want %q", got, tc.wantBound)
			}
		})
	}
}

func boundOf(r satoken.Request) string {
	var out []string
	if r.Pod != nil {
		out = append(out, "pod:"+r.Pod.Name+"/"+r.Pod.UID)
	}
	if r.Secret != nil {
		out = append(out, "secret:"+r.Secret.Name+"/"+r.Secret.UID)
	}
	if r.Node != nil {
		out = append(out, "node:"+r.Node.Name+"/"+r.Node.UID)
	}
	return strings.Join(out, " ")
}
