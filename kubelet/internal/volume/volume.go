// Package volume makes a pod's volumes on the host, under
// <root>/pods/<uid>/volumes: emptyDir, hostPath, and the projections
// (configMap, secret, downwardAPI, projected with service account tokens,
// cluster trust bundles and pod certificates) written atomically through
// a ..data symlink swap, as upstream's atomic writer does, so a container
// never sees half an update; and image volumes, read-only views of images
// the kubelet pulled.
package volume

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/kubelet/internal/imagevolume"
)

// FieldResolver returns downward API values for a pod.
type FieldResolver interface {
	// PodField returns the value of a metadata/spec/status field path.
	PodField(pod *corev1.Pod, path string) (string, error)
	// ContainerResource returns the value of a resource field reference.
	ContainerResource(pod *corev1.Pod, ref *corev1.ResourceFieldSelector) (string, error)
}

// PodCertificates issues the credentials of podCertificate sources.
type PodCertificates interface {
	// Credentials returns the private key and certificate chain (PEM) of
	// the index-th source of the pod's projected volume, or why there are
	// none yet.
	Credentials(ctx context.Context, pod *corev1.Pod, volume string, index int, p *corev1.PodCertificateProjection) (key, chain []byte, err error)
	// Forget drops what it keeps of the pod with this UID.
	Forget(uid types.UID)
}

// SetPodCertificates sets the issuer of podCertificate sources; without
// one they fail.
func (m *Manager) SetPodCertificates(c PodCertificates) { m.certs = c }

// ImageViews mounts images read-only (imagevolume.Client).
type ImageViews interface {
	// Mount makes v.Dir show v.Image read-only; a Dir already mounted is
	// left as it is.
	Mount(ctx context.Context, v imagevolume.View) error
	// Unmount unmounts dir and removes the view key; either may be gone.
	Unmount(ctx context.Context, key, dir string) error
	// List returns the image views there are, of any kubelet.
	List(ctx context.Context) ([]imagevolume.View, error)
}

// SetImageViews sets the mounter of image volumes; without one they fail.
func (m *Manager) SetImageViews(v ImageViews) { m.images = v }

// Manager sets up and tears down pod volumes.
type Manager struct {
	root    string
	client  kubernetes.Interface
	fields  FieldResolver
	bundles TrustBundles
	certs   PodCertificates
	images  ImageViews

	mu     sync.Mutex
	tokens map[string]*authenticationv1.TokenRequestStatus
}

// New returns a manager keeping pods' volumes under root/pods.
func New(root string, client kubernetes.Interface, fields FieldResolver) *Manager {
	return &Manager{root: root, client: client, fields: fields, tokens: map[string]*authenticationv1.TokenRequestStatus{}}
}

// PodDir is the pod's directory on the host.
func (m *Manager) PodDir(uid types.UID) string {
	return filepath.Join(m.root, "pods", string(uid))
}

// Setup makes every volume of pod and returns their host paths by name.
// imageIDs are the runtime's IDs of the images of image volumes, by
// volume name, pulled by the caller as their pull policies say.
func (m *Manager) Setup(ctx context.Context, pod *corev1.Pod, imageIDs map[string]string) (map[string]string, error) {
	paths := map[string]string{}
	podDir := m.PodDir(pod.UID)
	if err := os.MkdirAll(podDir, 0o750); err != nil {
		return nil, fmt.Errorf("pod directory: %w", err)
	}
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		path, err := m.setupOne(ctx, pod, v, imageIDs[v.Name])
		if err != nil {
			errs = append(errs, fmt.Errorf("volume %q: %w", v.Name, err))
			continue
		}
		paths[v.Name] = path
	}
	return paths, errors.Join(errs...)
}

func (m *Manager) volumeDir(pod *corev1.Pod, plugin, name string) string {
	return filepath.Join(m.PodDir(pod.UID), "volumes", plugin, name)
}

func (m *Manager) setupOne(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, imageID string) (string, error) {
	switch {
	case v.EmptyDir != nil:
		dir := m.volumeDir(pod, "kubernetes.io~empty-dir", v.Name)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return "", err
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			return "", err
		}
		if v.EmptyDir.Medium == corev1.StorageMediumMemory && !isMountPoint(dir) {
			opts := ""
			if v.EmptyDir.SizeLimit != nil && !v.EmptyDir.SizeLimit.IsZero() {
				opts = fmt.Sprintf("size=%d", v.EmptyDir.SizeLimit.Value())
			}
			if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
				return "", fmt.Errorf("mount tmpfs: %w", err)
			}
		}
		return dir, nil
	case v.HostPath != nil:
		return m.hostPath(v.HostPath)
	case v.PersistentVolumeClaim != nil:
		return m.persistentVolume(ctx, pod, v.PersistentVolumeClaim)
	case v.ConfigMap != nil, v.Secret != nil, v.DownwardAPI != nil, v.Projected != nil:
		files, err := m.projection(ctx, pod, v)
		if err != nil {
			return "", err
		}
		dir := m.volumeDir(pod, pluginName(v), v.Name)
		if err := WriteAtomic(dir, files, fsGroup(pod)); err != nil {
			return "", err
		}
		return dir, nil
	case v.Image != nil:
		return m.imageVolume(ctx, pod, v.Name, imageID)
	}
	return "", fmt.Errorf("volume type not supported by this kubelet")
}

// imageVolumePlugin names the directory of image volumes, as upstream's.
const imageVolumePlugin = "kubernetes.io~image"

func (m *Manager) imageVolume(ctx context.Context, pod *corev1.Pod, name, imageID string) (string, error) {
	if m.images == nil {
		return "", fmt.Errorf("image volumes are not supported by this kubelet")
	}
	if imageID == "" {
		return "", fmt.Errorf("image not pulled")
	}
	dir := m.volumeDir(pod, imageVolumePlugin, name)
	v := imagevolume.View{Key: imagevolume.Key(string(pod.UID), name), Image: imageID, Dir: dir, PodUID: string(pod.UID)}
	if err := m.images.Mount(ctx, v); err != nil {
		return "", err
	}
	return dir, nil
}

// teardownImageVolumes unmounts the pod's image volumes and removes their
// views. Each volume's directory names it: the pod spec may be gone.
func (m *Manager) teardownImageVolumes(ctx context.Context, uid types.UID) error {
	dir := filepath.Join(m.PodDir(uid), "volumes", imageVolumePlugin)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("image volumes of pod %s: %w", uid, err)
	}
	if m.images == nil {
		return fmt.Errorf("pod %s has image volumes, and this kubelet cannot unmount them", uid)
	}
	var errs []error
	for _, e := range entries {
		if err := m.images.Unmount(ctx, imagevolume.Key(string(uid), e.Name()), filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("image volume %q: %w", e.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// CleanupOrphanedImageVolumes removes the image views of this kubelet's
// root whose pods active says are gone: views a kubelet that stopped
// before tearing its pods down left, which no relist finds (a pod whose
// sandbox never started has no containers to see).
func (m *Manager) CleanupOrphanedImageVolumes(ctx context.Context, active func(types.UID) bool) error {
	if m.images == nil {
		return nil
	}
	views, err := m.images.List(ctx)
	if err != nil {
		return err
	}
	pods := filepath.Join(m.root, "pods") + string(filepath.Separator)
	var errs []error
	for _, v := range views {
		// Other kubelets may share the runtime (nodes in network
		// namespaces): their views are theirs.
		if !strings.HasPrefix(v.Dir, pods) || active(types.UID(v.PodUID)) {
			continue
		}
		if err := m.images.Unmount(ctx, v.Key, v.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func pluginName(v *corev1.Volume) string {
	switch {
	case v.ConfigMap != nil:
		return "kubernetes.io~configmap"
	case v.Secret != nil:
		return "kubernetes.io~secret"
	case v.DownwardAPI != nil:
		return "kubernetes.io~downward-api"
	}
	return "kubernetes.io~projected"
}

func (m *Manager) hostPath(hp *corev1.HostPathVolumeSource) (string, error) {
	t := ptr.Deref(hp.Type, corev1.HostPathUnset)
	fi, err := os.Stat(hp.Path)
	switch t {
	case corev1.HostPathUnset:
		return hp.Path, nil
	case corev1.HostPathDirectoryOrCreate:
		if os.IsNotExist(err) {
			return hp.Path, os.MkdirAll(hp.Path, 0o755)
		}
		if err == nil && !fi.IsDir() {
			return "", fmt.Errorf("hostPath %s is not a directory", hp.Path)
		}
	case corev1.HostPathFileOrCreate:
		if os.IsNotExist(err) {
			if err := os.MkdirAll(filepath.Dir(hp.Path), 0o755); err != nil {
				return "", err
			}
			f, err := os.OpenFile(hp.Path, os.O_CREATE|os.O_RDONLY, 0o644)
			if err != nil {
				return "", err
			}
			return hp.Path, f.Close()
		}
	case corev1.HostPathDirectory:
		if err != nil || !fi.IsDir() {
			return "", fmt.Errorf("hostPath type check failed: %s is not a directory", hp.Path)
		}
	case corev1.HostPathFile:
		if err != nil || !fi.Mode().IsRegular() {
			return "", fmt.Errorf("hostPath type check failed: %s is not a file", hp.Path)
		}
	case corev1.HostPathSocket:
		if err != nil || fi.Mode()&os.ModeSocket == 0 {
			return "", fmt.Errorf("hostPath type check failed: %s is not a socket file", hp.Path)
		}
	case corev1.HostPathCharDev:
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			return "", fmt.Errorf("hostPath type check failed: %s is not a character device", hp.Path)
		}
	case corev1.HostPathBlockDev:
		if err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
			return "", fmt.Errorf("hostPath type check failed: %s is not a block device", hp.Path)
		}
	}
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	return hp.Path, nil
}

// File is one file of a projected volume: its content, mode and, when
// User is set, its owner.
type File struct {
	Data []byte
	Mode int32
	User *int64
}

func (m *Manager) projection(ctx context.Context, pod *corev1.Pod, v *corev1.Volume) (map[string]File, error) {
	files := map[string]File{}
	switch {
	case v.ConfigMap != nil:
		mode := ptr.Deref(v.ConfigMap.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode)
		err := m.configMapFiles(ctx, pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, mode, files)
		return files, err
	case v.Secret != nil:
		mode := ptr.Deref(v.Secret.DefaultMode, corev1.SecretVolumeSourceDefaultMode)
		err := m.secretFiles(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, mode, files)
		return files, err
	case v.DownwardAPI != nil:
		mode := ptr.Deref(v.DownwardAPI.DefaultMode, corev1.DownwardAPIVolumeSourceDefaultMode)
		err := m.downwardFiles(pod, v.DownwardAPI.Items, mode, files)
		return files, err
	}
	mode := ptr.Deref(v.Projected.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)
	// Credentials (tokens, trust bundles, pod certificates) are for the
	// pod's user alone when it has one: owned by it, or by fsGroup's
	// group, mode 0600 (0640 once the group's read bit is added).
	user := fsUser(pod)
	credMode := mode
	if user != nil || fsGroup(pod) != nil {
		credMode = 0o600
	}
	for i, s := range v.Projected.Sources {
		var err error
		switch {
		case s.ConfigMap != nil:
			err = m.configMapFiles(ctx, pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, mode, files)
		case s.Secret != nil:
			err = m.secretFiles(ctx, pod.Namespace, s.Secret.Name, s.Secret.Items, s.Secret.Optional, mode, files)
		case s.DownwardAPI != nil:
			err = m.downwardFiles(pod, s.DownwardAPI.Items, mode, files)
		case s.ServiceAccountToken != nil:
			var tok string
			tok, err = m.serviceAccountToken(ctx, pod, s.ServiceAccountToken)
			if err == nil {
				files[s.ServiceAccountToken.Path] = File{Data: []byte(tok), Mode: credMode, User: user}
			}
		case s.ClusterTrustBundle != nil:
			var data []byte
			data, err = m.clusterTrustBundle(ctx, s.ClusterTrustBundle)
			if err == nil {
				files[s.ClusterTrustBundle.Path] = File{Data: data, Mode: credMode, User: user}
			}
		case s.PodCertificate != nil:
			err = m.podCertificateFiles(ctx, pod, v.Name, i, s.PodCertificate, File{Mode: credMode, User: user}, files)
		}
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// podCertificateFiles adds the files of a podCertificate source: the key
// and chain together, the key, the chain, as its paths ask.
func (m *Manager) podCertificateFiles(ctx context.Context, pod *corev1.Pod, volume string, index int, p *corev1.PodCertificateProjection, like File, files map[string]File) error {
	if m.certs == nil {
		return fmt.Errorf("podCertificate sources are not supported by this kubelet")
	}
	key, chain, err := m.certs.Credentials(ctx, pod, volume, index, p)
	if err != nil {
		return err
	}
	add := func(path string, data ...[]byte) {
		if path != "" {
			f := like
			f.Data = bytes.Join(data, nil)
			files[path] = f
		}
	}
	add(p.CredentialBundlePath, key, chain)
	add(p.KeyPath, key)
	add(p.CertificateChainPath, chain)
	return nil
}

func pickItems(data map[string][]byte, items []corev1.KeyToPath, mode int32, kind, name string, files map[string]File) error {
	if len(items) == 0 {
		for k, v := range data {
			files[k] = File{Data: v, Mode: mode}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("configuration key %q not found in %s %q", it.Key, kind, name)
		}
		files[it.Path] = File{Data: v, Mode: ptr.Deref(it.Mode, mode)}
	}
	return nil
}

func (m *Manager) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, mode int32, files map[string]File) error {
	if m.client == nil {
		return fmt.Errorf("no apiserver connection for configmap %q", name)
	}
	cm, err := m.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && ptr.Deref(optional, false) {
			return nil
		}
		return fmt.Errorf("configmap %q: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return pickItems(data, items, mode, "ConfigMap", name, files)
}

func (m *Manager) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, mode int32, files map[string]File) error {
	if m.client == nil {
		return fmt.Errorf("no apiserver connection for secret %q", name)
	}
	s, err := m.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && ptr.Deref(optional, false) {
			return nil
		}
		return fmt.Errorf("secret %q: %w", name, err)
	}
	return pickItems(s.Data, items, mode, "Secret", name, files)
}

func (m *Manager) downwardFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, mode int32, files map[string]File) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = m.fields.PodField(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = m.fields.ContainerResource(pod, it.ResourceFieldRef)
		}
		if err != nil {
			return fmt.Errorf("downward API item %s: %w", it.Path, err)
		}
		files[it.Path] = File{Data: []byte(v), Mode: ptr.Deref(it.Mode, mode)}
	}
	return nil
}

// serviceAccountToken returns a bound token for the pod, requested
// through TokenRequest and renewed once 80% of its life has passed (or
// after 24 hours), as upstream's token manager does.
func (m *Manager) serviceAccountToken(ctx context.Context, pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (string, error) {
	if m.client == nil {
		return "", fmt.Errorf("no apiserver connection for a service account token")
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := ptr.Deref(p.ExpirationSeconds, 3600)
	key := fmt.Sprintf("%s/%s/%s/%s/%d", pod.UID, sa, p.Audience, pod.Namespace, exp)
	m.mu.Lock()
	cached := m.tokens[key]
	m.mu.Unlock()
	if cached != nil && !needsRefresh(cached, exp) {
		return cached.Token, nil
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if p.Audience != "" {
		tr.Spec.Audiences = []string{p.Audience}
	}
	out, err := m.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, tr, metav1.CreateOptions{})
	if err != nil {
		if cached != nil && time.Now().Before(cached.ExpirationTimestamp.Time) {
			return cached.Token, nil
		}
		return "", fmt.Errorf("request token for service account %s/%s: %w", pod.Namespace, sa, err)
	}
	m.mu.Lock()
	m.tokens[key] = &out.Status
	m.mu.Unlock()
	return out.Status.Token, nil
}

func needsRefresh(st *authenticationv1.TokenRequestStatus, exp int64) bool {
	life := time.Duration(exp) * time.Second
	issued := st.ExpirationTimestamp.Add(-life)
	refreshAt := issued.Add(life * 8 / 10)
	if d := issued.Add(24 * time.Hour); d.Before(refreshAt) {
		refreshAt = d
	}
	return !time.Now().Before(refreshAt)
}

// Teardown unmounts memory-backed emptyDirs and image volumes and removes
// the pod's directory.
func (m *Manager) Teardown(ctx context.Context, uid types.UID) error {
	dir := m.PodDir(uid)
	// Never remove below a mount that stayed: an image's files are
	// containerd's.
	if err := m.teardownImageVolumes(ctx, uid); err != nil {
		return err
	}
	emptyDirs := filepath.Join(dir, "volumes", "kubernetes.io~empty-dir")
	if entries, err := os.ReadDir(emptyDirs); err == nil {
		for _, e := range entries {
			p := filepath.Join(emptyDirs, e.Name())
			if isMountPoint(p) {
				if err := unix.Unmount(p, 0); err != nil {
					return fmt.Errorf("unmount %s: %w", p, err)
				}
			}
		}
	}
	if m.certs != nil {
		m.certs.Forget(uid)
	}
	m.mu.Lock()
	for k := range m.tokens {
		if strings.HasPrefix(k, string(uid)+"/") {
			delete(m.tokens, k)
		}
	}
	m.mu.Unlock()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove pod directory: %w", err)
	}
	return nil
}

func isMountPoint(path string) bool {
	var st, parent unix.Stat_t
	if unix.Stat(path, &st) != nil || unix.Stat(filepath.Dir(path), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// WriteAtomic makes dir hold exactly files: it writes them into a new
// timestamped directory, points the ..data symlink at it with a rename
// (atomic), and keeps one symlink per top-level name pointing through
// ..data. Nothing is written when the content is unchanged. With a
// group, the volume is given to it (setOwnership) before the new files
// show.
func WriteAtomic(dir string, files map[string]File, group *int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasPrefix(n, "..") || filepath.IsAbs(n) || strings.Contains(n, "/../") {
			return fmt.Errorf("invalid file name %q", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", n, files[n].Mode, len(files[n].Data))
		if u := files[n].User; u != nil {
			fmt.Fprintf(h, "%d\x00", *u)
		}
		h.Write(files[n].Data)
	}
	sum := hex.EncodeToString(h.Sum(nil))[:16]
	dataLink := filepath.Join(dir, "..data")
	if cur, err := os.Readlink(dataLink); err == nil && strings.HasSuffix(cur, "_"+sum) {
		return nil
	}
	tsDir := "..." + time.Now().UTC().Format("2006_01_02_15_04_05.000000000") + "_" + sum
	full := filepath.Join(dir, tsDir)
	if err := os.MkdirAll(full, 0o755); err != nil {
		return err
	}
	for _, n := range names {
		p := filepath.Join(full, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[n].Data, os.FileMode(files[n].Mode)&0o777); err != nil {
			return err
		}
		if err := os.Chmod(p, os.FileMode(files[n].Mode)&0o777); err != nil {
			return err
		}
		if u := files[n].User; u != nil {
			if err := os.Chown(p, int(*u), -1); err != nil {
				return err
			}
		}
	}
	if group != nil {
		if err := setOwnership(dir, *group); err != nil {
			return err
		}
	}
	old, _ := os.Readlink(dataLink)
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(tsDir, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dataLink); err != nil {
		return err
	}
	top := map[string]bool{}
	for _, n := range names {
		first, _, _ := strings.Cut(n, "/")
		top[first] = true
	}
	for t := range top {
		link := filepath.Join(dir, t)
		if target, err := os.Readlink(link); err == nil && target == filepath.Join("..data", t) {
			continue
		}
		_ = os.RemoveAll(link)
		if err := os.Symlink(filepath.Join("..data", t), link); err != nil {
			return err
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, "..") || top[n] {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, n))
	}
	if old != "" && old != tsDir {
		_ = os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// SetFields sets the resolver of downward API values (the kubelet, made
// after the manager).
func (m *Manager) SetFields(f FieldResolver) { m.fields = f }
