package satoken

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
)

// fakeObjects serves objects from maps keyed by "namespace/name".
type fakeObjects struct {
	sas     map[string]*corev1.ServiceAccount
	pods    map[string]*corev1.Pod
	secrets map[string]*corev1.Secret
	nodes   map[string]*corev1.Node
}

func notFound(res, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: res}, name)
}

func (f *fakeObjects) ServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if o, ok := f.sas[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, notFound("serviceaccounts", name)
}

func (f *fakeObjects) Pod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if o, ok := f.pods[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, notFound("pods", name)
}

func (f *fakeObjects) Secret(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if o, ok := f.secrets[ns+"/"+name]; ok {
		return o, nil
	}
	return nil, notFound("secrets", name)
}

func (f *fakeObjects) Node(_ context.Context, name string) (*corev1.Node, error) {
	if o, ok := f.nodes[name]; ok {
		return o, nil
	}
	return nil, notFound("nodes", name)
}

func meta(ns, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}
}

func newObjects() *fakeObjects {
	return &fakeObjects{
		sas:     map[string]*corev1.ServiceAccount{"demo/default": {ObjectMeta: meta("demo", "default", "sa-uid")}},
		pods:    map[string]*corev1.Pod{"demo/web": {ObjectMeta: meta("demo", "web", "pod-uid")}},
		secrets: map[string]*corev1.Secret{"demo/s": {ObjectMeta: meta("demo", "s", "secret-uid")}},
		nodes:   map[string]*corev1.Node{"n1": {ObjectMeta: meta("", "n1", "node-uid")}},
	}
}

const testIssuer = "https://kubernetes.default.svc.cluster.local"

func baseRequest() Request {
	return Request{Namespace: "demo", Name: "default", UID: "sa-uid", Audiences: []string{testIssuer}, Lifetime: time.Hour}
}

func mustKey(t *testing.T, kind string) crypto.Signer {
	t.Helper()
	var k crypto.Signer
	var err error
	switch kind {
	case "rsa":
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignAndVerify(t *testing.T) {
	ecKey := mustKey(t, "ec")
	rsaKey := mustKey(t, "rsa")
	otherKey := mustKey(t, "ec")
	past := time.Now().Add(-2 * time.Hour)

	tests := []struct {
		name        string
		key         crypto.Signer
		issuer      string
		req         func(r *Request)
		mutate      func(o *fakeObjects)
		tamper      func(tok string) string
		signedAt    time.Time
		ctxAuds     []string
		wantOK      bool
		wantErr     bool
		wantUser    string
		wantExtraPo string
		wantNode    string // node-name and node-uid extras, "name/uid"
	}{
		{name: "valid ECDSA token", key: ecKey, wantOK: true, wantUser: "system:serviceaccount:demo:default"},
		{name: "valid RSA token", key: rsaKey, wantOK: true, wantUser: "system:serviceaccount:demo:default"},
		{name: "bound to live pod", key: ecKey, req: func(r *Request) { r.Pod = &ObjectRef{Name: "web", UID: "pod-uid"} }, wantOK: true, wantUser: "system:serviceaccount:demo:default", wantExtraPo: "web"},
		{name: "bound to live secret and node", key: ecKey, req: func(r *Request) {
			r.Secret = &ObjectRef{Name: "s", UID: "secret-uid"}
			r.Node = &ObjectRef{Name: "n1", UID: "node-uid"}
		}, wantOK: true, wantUser: "system:serviceaccount:demo:default"},
		{name: "pod's token names its node", key: ecKey, req: func(r *Request) {
			r.Pod = &ObjectRef{Name: "web", UID: "pod-uid"}
			r.Node = &ObjectRef{Name: "n1", UID: "node-uid"}
		}, wantOK: true, wantUser: "system:serviceaccount:demo:default", wantExtraPo: "web", wantNode: "n1/node-uid"},
		{name: "pod's node is not checked", key: ecKey, req: func(r *Request) {
			r.Pod = &ObjectRef{Name: "web", UID: "pod-uid"}
			r.Node = &ObjectRef{Name: "gone"}
		}, wantOK: true, wantUser: "system:serviceaccount:demo:default", wantExtraPo: "web", wantNode: "gone/"},
		{name: "signed by unknown key", key: otherKey, wantErr: true},
		{name: "tampered payload", key: ecKey, tamper: tamperPayload, wantErr: true},
		{name: "tampered signature", key: ecKey, tamper: func(tok string) string {
			parts := strings.Split(tok, ".")
			sig := []byte(parts[2])
			if sig[0] == 'A' {
				sig[0] = 'B'
			} else {
				sig[0] = 'A'
			}
			return parts[0] + "." + parts[1] + "." + string(sig)
		}, wantErr: true},
		{name: "foreign issuer is left to other authenticators", key: ecKey, issuer: "https://other.example", wantOK: false},
		{name: "wrong audience", key: ecKey, req: func(r *Request) { r.Audiences = []string{"vault"} }, wantErr: true},
		{name: "audience from request context", key: ecKey, req: func(r *Request) { r.Audiences = []string{"vault"} }, ctxAuds: []string{"vault"}, wantOK: true, wantUser: "system:serviceaccount:demo:default"},
		{name: "expired", key: ecKey, signedAt: past, wantErr: true},
		{name: "deleted service account", key: ecKey, mutate: func(o *fakeObjects) { delete(o.sas, "demo/default") }, wantErr: true},
		{name: "recreated service account", key: ecKey, mutate: func(o *fakeObjects) { o.sas["demo/default"].UID = "new-uid" }, wantErr: true},
		{name: "bound pod deleted", key: ecKey, req: func(r *Request) { r.Pod = &ObjectRef{Name: "web", UID: "pod-uid"} }, mutate: func(o *fakeObjects) { delete(o.pods, "demo/web") }, wantErr: true},
		{name: "bound pod past its deletion timestamp", key: ecKey, req: func(r *Request) { r.Pod = &ObjectRef{Name: "web", UID: "pod-uid"} }, mutate: func(o *fakeObjects) {
			ts := metav1.NewTime(time.Now().Add(-time.Second))
			o.pods["demo/web"].DeletionTimestamp = &ts
		}, wantErr: true},
		{name: "bound secret recreated", key: ecKey, req: func(r *Request) { r.Secret = &ObjectRef{Name: "s", UID: "secret-uid"} }, mutate: func(o *fakeObjects) { o.secrets["demo/s"].UID = "x" }, wantErr: true},
		{name: "bound node deleted", key: ecKey, req: func(r *Request) { r.Node = &ObjectRef{Name: "n1", UID: "node-uid"} }, mutate: func(o *fakeObjects) { delete(o.nodes, "n1") }, wantErr: true},
		{name: "not a JWT", key: ecKey, tamper: func(string) string { return "abcdef.0123456789abcdef" }, wantOK: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			issuer := testIssuer
			if tc.issuer != "" {
				issuer = tc.issuer
			}
			s, err := NewSigner(issuer, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.signedAt.IsZero() {
				s.now = func() time.Time { return tc.signedAt }
			}
			r := baseRequest()
			if tc.req != nil {
				tc.req(&r)
			}
			tok, _, err := s.Sign(r)
			if err != nil {
				t.Fatal(err)
			}
			if tc.tamper != nil {
				tok = tc.tamper(tok)
			}
			objs := newObjects()
			if tc.mutate != nil {
				tc.mutate(objs)
			}
			v, err := NewVerifier([]string{testIssuer}, []crypto.PublicKey{ecKey.Public(), rsaKey.Public()}, []string{testIssuer}, objs)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.ctxAuds != nil {
				ctx = authenticator.WithAudiences(ctx, tc.ctxAuds)
			}
			resp, ok, err := v.AuthenticateToken(ctx, tok)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			u := resp.User
			if u.GetName() != tc.wantUser || u.GetUID() != "sa-uid" {
				t.Errorf("user = %q uid %q", u.GetName(), u.GetUID())
			}
			if g := u.GetGroups(); len(g) != 2 || g[0] != "system:serviceaccounts" || g[1] != "system:serviceaccounts:demo" {
				t.Errorf("groups = %v", g)
			}
			if tc.wantExtraPo != "" && u.GetExtra()[ExtraPodName][0] != tc.wantExtraPo {
				t.Errorf("pod-name extra = %v", u.GetExtra()[ExtraPodName])
			}
			if tc.wantNode != "" {
				got := strings.Join(u.GetExtra()[ExtraNodeName], ",") + "/" + strings.Join(u.GetExtra()[ExtraNodeUID], ",")
				if got != tc.wantNode {
					t.Errorf("node extras = %q, want %q", got, tc.wantNode)
				}
			}
			if !strings.HasPrefix(u.GetExtra()[ExtraCredentialID][0], "JTI=") {
				t.Errorf("credential-id extra = %v", u.GetExtra()[ExtraCredentialID])
			}
		})
	}
}

// tamperPayload rewrites the subject without re-signing.
func tamperPayload(tok string) string {
	parts := strings.Split(tok, ".")
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		panic(err)
	}
	body = []byte(strings.Replace(string(body), "demo:default", "demo:admin0", 1))
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(body) + "." + parts[2]
}

func TestAlgNoneRefused(t *testing.T) {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	body := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + testIssuer + `","sub":"system:serviceaccount:demo:default","aud":["` + testIssuer + `"],"exp":9999999999,"kubernetes.io":{"namespace":"demo","serviceaccount":{"name":"default","uid":"sa-uid"}}}`))
	v, err := NewVerifier([]string{testIssuer}, []crypto.PublicKey{mustKey(t, "ec").Public()}, []string{testIssuer}, newObjects())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := v.AuthenticateToken(context.Background(), header+"."+body+"."); ok {
		t.Fatal("alg none token was accepted")
	}
}

func TestSignRejectsIncompleteRequests(t *testing.T) {
	s, err := NewSigner(testIssuer, mustKey(t, "ec"))
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Request){
		"missing uid":       func(r *Request) { r.UID = "" },
		"no audiences":      func(r *Request) { r.Audiences = nil },
		"non-positive life": func(r *Request) { r.Lifetime = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			r := baseRequest()
			mutate(&r)
			if _, _, err := s.Sign(r); err == nil {
				t.Fatal("Sign accepted an incomplete request")
			}
		})
	}
}
