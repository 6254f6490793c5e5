// Package token creates, lists and deletes bootstrap tokens: Secrets of type
// bootstrap.kubernetes.io/token in kube-system, in the format of
// k8s.io/cluster-bootstrap, which the apiserver's bootstrap authenticator and the
// controller-manager's bootstrapsigner and tokencleaner read.
package token

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"trireme.dev/api/config/v1alpha1"
)

// Secret builds the Secret for t, generating the token when t.Token is empty (the
// generated value is written back into t). now sets the expiration.
func Secret(t *v1alpha1.BootstrapToken, now time.Time) (*corev1.Secret, error) {
	if t.Token == "" {
		tok, err := bootstraputil.GenerateBootstrapToken()
		if err != nil {
			return nil, err
		}
		t.Token = tok
	}
	m := bootstraputil.BootstrapTokenRegexp.FindStringSubmatch(t.Token)
	if len(m) != 3 {
		return nil, fmt.Errorf("token does not match %q", bootstrapapi.BootstrapTokenPattern)
	}
	id, secret := m[1], m[2]
	data := map[string][]byte{
		bootstrapapi.BootstrapTokenIDKey:     []byte(id),
		bootstrapapi.BootstrapTokenSecretKey: []byte(secret),
	}
	if t.Description != "" {
		data[bootstrapapi.BootstrapTokenDescriptionKey] = []byte(t.Description)
	}
	if t.TTL != nil && t.TTL.Duration > 0 {
		data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(now.Add(t.TTL.Duration).UTC().Format(time.RFC3339))
	}
	if err := bootstraputil.ValidateUsages(t.Usages); err != nil {
		return nil, err
	}
	for _, u := range t.Usages {
		data[bootstrapapi.BootstrapTokenUsagePrefix+u] = []byte("true")
	}
	for _, g := range t.Groups {
		if err := bootstraputil.ValidateBootstrapGroupName(g); err != nil {
			return nil, err
		}
	}
	if len(t.Groups) > 0 {
		data[bootstrapapi.BootstrapTokenExtraGroupsKey] = []byte(strings.Join(t.Groups, ","))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		Data:       data,
	}, nil
}

// Create creates or updates the Secret of t.
func Create(ctx context.Context, c kubernetes.Interface, t *v1alpha1.BootstrapToken, now time.Time) error {
	s, err := Secret(t, now)
	if err != nil {
		return err
	}
	secrets := c.CoreV1().Secrets(metav1.NamespaceSystem)
	if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create bootstrap token secret %s: %w", s.Name, err)
		}
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update bootstrap token secret %s: %w", s.Name, err)
		}
	}
	return nil
}

// Info is a listed token.
type Info struct {
	ID, Token, Description string
	Expires                *time.Time
	Usages, Groups         []string
}

// List returns the bootstrap tokens of the cluster, sorted by ID.
func List(ctx context.Context, c kubernetes.Interface) ([]Info, error) {
	list, err := c.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{
		FieldSelector: "type=" + string(bootstrapapi.SecretTypeBootstrapToken),
	})
	if err != nil {
		return nil, fmt.Errorf("list bootstrap tokens: %w", err)
	}
	var out []Info
	for _, s := range list.Items {
		if s.Type != bootstrapapi.SecretTypeBootstrapToken {
			continue
		}
		id, secret := string(s.Data[bootstrapapi.BootstrapTokenIDKey]), string(s.Data[bootstrapapi.BootstrapTokenSecretKey])
		if bootstraputil.BootstrapTokenSecretName(id) != s.Name {
			continue
		}
		info := Info{ID: id, Token: bootstraputil.TokenFromIDAndSecret(id, secret), Description: string(s.Data[bootstrapapi.BootstrapTokenDescriptionKey])}
		if exp := string(s.Data[bootstrapapi.BootstrapTokenExpirationKey]); exp != "" {
			if t, err := time.Parse(time.RFC3339, exp); err == nil {
				info.Expires = &t
			}
		}
		for k, v := range s.Data {
			if strings.HasPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix) && string(v) == "true" {
				info.Usages = append(info.Usages, strings.TrimPrefix(k, bootstrapapi.BootstrapTokenUsagePrefix))
			}
		}
		sort.Strings(info.Usages)
		if g := string(s.Data[bootstrapapi.BootstrapTokenExtraGroupsKey]); g != "" {
			info.Groups = strings.Split(g, ",")
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete deletes the token whose ID is idOrToken or its first part.
func Delete(ctx context.Context, c kubernetes.Interface, idOrToken string) error {
	id := idOrToken
	if m := bootstraputil.BootstrapTokenRegexp.FindStringSubmatch(idOrToken); len(m) == 3 {
		id = m[1]
	}
	if !bootstraputil.IsValidBootstrapTokenID(id) {
		return fmt.Errorf("%q is neither a token ID nor a token", idOrToken)
	}
	name := bootstraputil.BootstrapTokenSecretName(id)
	if err := c.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete bootstrap token %s: %w", id, err)
	}
	return nil
}
