package pullsecrets

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// dockerConfigEntry is one registry's credentials in a .dockerconfigjson
// or .dockercfg Secret.
type dockerConfigEntry struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	Email         string `json:"email,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// Auths returns the credentials of the pod's imagePullSecrets that match
// image, the most specific registry path first, as upstream's keyring
// orders them, and a warning for each secret it could not use. Missing or
// malformed secrets are skipped (upstream warns and pulls without them);
// a nil client reads none.
func Auths(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, image string) ([]*runtimeapi.AuthConfig, []string) {
	var warnings []string
	type match struct {
		key  string
		auth *runtimeapi.AuthConfig
	}
	var matches []match
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		s, err := secret(ctx, client, pod.Namespace, ref.Name)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", ref.Name))
			continue
		}
		entries, err := dockerConfigEntries(s)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("Image pull secret %s: %v", ref.Name, err))
			continue
		}
		for key, e := range entries {
			if !registryMatches(key, image) {
				continue
			}
			matches = append(matches, match{key: key, auth: e.authConfig(key)})
		}
	}
	sort.SliceStable(matches, func(i, j int) bool {
		return len(normalizeRegistryKey(matches[i].key)) > len(normalizeRegistryKey(matches[j].key))
	})
	auths := make([]*runtimeapi.AuthConfig, 0, len(matches))
	for _, m := range matches {
		auths = append(auths, m.auth)
	}
	return auths, warnings
}

func (e dockerConfigEntry) authConfig(server string) *runtimeapi.AuthConfig {
	a := &runtimeapi.AuthConfig{
		Username: e.Username, Password: e.Password, ServerAddress: normalizeRegistryKey(server),
		IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken,
	}
	if e.Auth != "" && a.Username == "" {
		if raw, err := base64.StdEncoding.DecodeString(e.Auth); err == nil {
			if u, p, ok := strings.Cut(string(raw), ":"); ok {
				a.Username, a.Password = u, p
			}
		}
	}
	return a
}

func secret(ctx context.Context, client kubernetes.Interface, ns, name string) (*corev1.Secret, error) {
	if client == nil {
		return nil, fmt.Errorf("no apiserver connection")
	}
	return client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
}

// dockerConfigEntries reads a kubernetes.io/dockerconfigjson or
// kubernetes.io/dockercfg Secret.
func dockerConfigEntries(s *corev1.Secret) (map[string]dockerConfigEntry, error) {
	if b, ok := s.Data[corev1.DockerConfigJsonKey]; ok {
		var cfg struct {
			Auths map[string]dockerConfigEntry `json:"auths"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("parse %s: %w", corev1.DockerConfigJsonKey, err)
		}
		return cfg.Auths, nil
	}
	if b, ok := s.Data[corev1.DockerConfigKey]; ok {
		var cfg map[string]dockerConfigEntry
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("parse %s: %w", corev1.DockerConfigKey, err)
		}
		return cfg, nil
	}
	return nil, fmt.Errorf("neither %s nor %s in the secret", corev1.DockerConfigJsonKey, corev1.DockerConfigKey)
}

// normalizeRegistryKey strips a scheme and Docker Hub's v1/v2 suffixes:
// "https://index.docker.io/v1/" is "docker.io".
func normalizeRegistryKey(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key = strings.TrimSuffix(key, "/")
	key = strings.TrimSuffix(strings.TrimSuffix(key, "/v1"), "/v2")
	if key == "index.docker.io" || key == "registry-1.docker.io" {
		key = "docker.io"
	}
	return key
}

// imageRepository is the image's registry host and repository path, with
// Docker Hub's implicit host made explicit.
func imageRepository(image string) string {
	name := image
	if i := strings.Index(name, "@"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	first, _, found := strings.Cut(name, "/")
	if !found || !(strings.ContainsAny(first, ".:") || first == "localhost") {
		return "docker.io/" + name
	}
	if first == "index.docker.io" || first == "registry-1.docker.io" {
		return "docker.io" + name[len(first):]
	}
	return name
}

// registryMatches reports whether a credential key (host[:port][/path],
// host labels may be globs like *.example.com) covers image.
func registryMatches(key, image string) bool {
	k := normalizeRegistryKey(key)
	repo := imageRepository(image)
	kHost, kPath, _ := strings.Cut(k, "/")
	rHost, rPath, _ := strings.Cut(repo, "/")
	if !hostMatches(kHost, rHost) {
		return false
	}
	return kPath == "" || rPath == kPath || strings.HasPrefix(rPath, kPath+"/")
}

func hostMatches(pattern, host string) bool {
	pHost, pPort, _ := strings.Cut(pattern, ":")
	hHost, hPort, _ := strings.Cut(host, ":")
	if pPort != hPort {
		return false
	}
	pl, hl := strings.Split(pHost, "."), strings.Split(hHost, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if ok, err := path.Match(pl[i], hl[i]); err != nil || !ok {
			return false
		}
	}
	return true
}
