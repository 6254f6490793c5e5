// Package copycerts shares the cluster's CAs and service-account keys between
// control-plane nodes as kubeadm's upload-certs does: init encrypts them with a
// random 32-byte certificate key (AES-256-GCM) into the kube-system/kubeadm-certs
// Secret, owned by a short-lived bootstrap token so that the token cleaner's
// deletion of the token garbage-collects the Secret; `join --control-plane`
// downloads and decrypts them with the key init printed.
package copycerts

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/clusterphases"
	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/token"
)

// SecretName is the Secret in kube-system holding the encrypted files.
const SecretName = "kubeadm-certs"

// TTL is how long the Secret lives (its owner token's TTL), as upstream.
const TTL = 2 * time.Hour

// roleName is the Role (and RoleBinding) letting joining nodes' bootstrap
// tokens read the Secret.
const roleName = "kubeadm:kubeadm-certs"

// Files maps each Secret key to its file below the certificates directory:
// everything a control-plane node cannot make itself.
func Files(externalEtcd bool) map[string]string {
	f := map[string]string{
		"ca.crt":             "ca.crt",
		"ca.key":             "ca.key",
		"sa.key":             "sa.key",
		"sa.pub":             "sa.pub",
		"front-proxy-ca.crt": "front-proxy-ca.crt",
		"front-proxy-ca.key": "front-proxy-ca.key",
	}
	if !externalEtcd {
		f["etcd-ca.crt"] = "etcd/ca.crt"
		f["etcd-ca.key"] = "etcd/ca.key"
	}
	return f
}

// CreateKey returns a new random certificate key, hex-encoded.
func CreateKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// CheckKey reports whether key is a well-formed certificate key.
func CheckKey(key string) error {
	_, err := parseKey(key)
	return err
}

func parseKey(key string) ([]byte, error) {
	k, err := hex.DecodeString(key)
	if err != nil || len(k) != 32 {
		return nil, errors.New("the certificate key must be 64 hex digits (32 bytes)")
	}
	return k, nil
}

// Encrypt seals data with the hex key; the nonce leads the result.
func Encrypt(data []byte, key string) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return gcm.Seal(nonce, nonce, data, nil), nil
}

// Decrypt opens what Encrypt sealed with the same key.
func Decrypt(data []byte, key string) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	if len(data) < gcm.NonceSize() {
		return nil, errors.New("ciphertext too short")
	}
	out, err := gcm.Open(nil, data[:gcm.NonceSize()], data[gcm.NonceSize():], nil)
	if err != nil {
		return nil, errors.New("cannot decrypt: wrong certificate key, or the data was altered")
	}
	return out, nil
}

func newGCM(key string) (cipher.AEAD, error) {
	k, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Upload encrypts the shared files below pkiDir into the Secret, owned by a new
// bootstrap token that expires after TTL, and lets bootstrap tokens of groups
// read it.
func Upload(ctx context.Context, c kubernetes.Interface, pkiDir, key string, externalEtcd bool, groups []string, now time.Time) error {
	data := map[string][]byte{}
	for name, file := range Files(externalEtcd) {
		plain, err := os.ReadFile(filepath.Join(pkiDir, file))
		if err != nil {
			return fmt.Errorf("upload-certs: %w", err)
		}
		if data[name], err = Encrypt(plain, key); err != nil {
			return err
		}
	}
	owner := &v1alpha1.BootstrapToken{TTL: &metav1.Duration{Duration: TTL}, Description: "Proxy for managing TTL for the kubeadm-certs secret"}
	if err := token.Create(ctx, c, owner, now); err != nil {
		return err
	}
	id, _, _ := strings.Cut(owner.Token, ".")
	ownerSecret, err := c.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, "bootstrap-token-"+id, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read the owner token: %w", err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: metav1.NamespaceSystem,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: ownerSecret.Name, UID: ownerSecret.UID}}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	secrets := c.CoreV1().Secrets(metav1.NamespaceSystem)
	if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create kube-system/%s: %w", SecretName, err)
		}
		old, err := secrets.Get(ctx, SecretName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.ResourceVersion = old.ResourceVersion
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update kube-system/%s: %w", SecretName, err)
		}
	}
	return readRBAC(ctx, c, groups)
}

// readRBAC lets the bootstrap token groups get the Secret (and nothing else).
func readRBAC(ctx context.Context, c kubernetes.Interface, groups []string) error {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: roleName, Namespace: metav1.NamespaceSystem},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{SecretName}, Verbs: []string{"get"}}},
	}
	subjects := make([]rbacv1.Subject, 0, len(groups))
	for _, g := range groups {
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: g})
	}
	return clusterphases.ApplyRoleAndBinding(ctx, c, role, subjects...)
}

// Download reads the Secret, decrypts it with key and writes the files below
// pkiDir (keys 0600, certificates 0644).
func Download(ctx context.Context, c kubernetes.Interface, pkiDir, key string, externalEtcd bool) ([]string, error) {
	s, err := c.CoreV1().Secrets(metav1.NamespaceSystem).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("kube-system/%s is gone (it lives %s): run `triremeadm init phase upload-certs --upload-certs` on a control-plane node for a new key", SecretName, TTL)
		}
		return nil, fmt.Errorf("read kube-system/%s: %w", SecretName, err)
	}
	var written []string
	for name, file := range Files(externalEtcd) {
		enc, ok := s.Data[name]
		if !ok {
			return nil, fmt.Errorf("kube-system/%s lacks %s", SecretName, name)
		}
		plain, err := Decrypt(enc, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(file, ".key") {
			mode = 0o600
		}
		path := filepath.Join(pkiDir, file)
		if err := pki.WriteFile(path, plain, mode); err != nil {
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}
