package upgrade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"trireme.dev/adm/internal/staticpod"
)

// HealthChecker waits for a replaced static pod.
type HealthChecker interface {
	// WaitHealthy returns nil once the kubelet runs pod (the manifest written
	// at since, with its new image) and the pod's health endpoint answers; an
	// error when it has not within the checker's timeout or ctx ends.
	WaitHealthy(ctx context.Context, pod *corev1.Pod, since time.Time) error
}

// BackupManifests copies every manifest of manifestsDir into a new directory
// below backupRoot named for now (kubeadm's kubeadm-backup-manifests-*), and
// returns it.
func BackupManifests(manifestsDir, backupRoot string, now time.Time) (string, error) {
	dir := filepath.Join(backupRoot, "triremeadm-backup-manifests-"+now.UTC().Format("2006-01-02-15-04-05"))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("back up manifests: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(manifestsDir, "*.yaml"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("back up manifests: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o600); err != nil {
			return "", fmt.Errorf("back up manifests: %w", err)
		}
	}
	return dir, nil
}

// SetImage moves every container of pod whose image is one of Trireme's
// (repository/<name>:<tag>) to tag, and reports whether one changed.
func SetImage(pod *corev1.Pod, repository, tag string) bool {
	changed := false
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if !strings.HasPrefix(c.Image, repository+"/") || Tag(c.Image) == tag {
			continue
		}
		c.Image = WithTag(c.Image, tag)
		changed = true
	}
	return changed
}

// Replacer replaces a node's static pods with another version's, one at a
// time, and puts the node's manifests back when one does not become healthy.
type Replacer struct {
	ManifestsDir string
	// BackupDir holds the manifests as they were (BackupManifests).
	BackupDir string
	// Repository and Version are the images' repository and the target tag.
	Repository, Version string
	Health              HealthChecker
	// Progress is told of each step.
	Progress func(format string, args ...any)
}

// Replace moves the components, in order, to r.Version. A component without
// a manifest is left out, one already at the version is restarted all the
// same (so that it loads renewed certificates). When one does not become
// healthy, every manifest replaced so far is restored from the backup, the
// restored pods are waited for, and the error says what happened.
func (r *Replacer) Replace(ctx context.Context, components []string) error {
	var done []string
	for _, c := range components {
		pod, err := staticpod.Read(staticpod.Path(r.ManifestsDir, c))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		from := ""
		if len(pod.Spec.Containers) > 0 {
			from = Tag(pod.Spec.Containers[0].Image)
		}
		SetImage(pod, r.Repository, r.Version)
		since := time.Now()
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[staticpod.RestartedAtAnnotation] = since.UTC().Format(time.RFC3339Nano)
		r.Progress("%s: %s → %s", c, from, r.Version)
		done = append(done, c)
		if err := staticpod.Replace(r.ManifestsDir, c, pod); err != nil {
			return r.rollback(ctx, done, fmt.Errorf("replace %s: %w", c, err))
		}
		if err := r.Health.WaitHealthy(ctx, pod, since); err != nil {
			return r.rollback(ctx, done, fmt.Errorf("%s did not become healthy at %s: %w", c, r.Version, err))
		}
		r.Progress("%s healthy at %s after %s", c, r.Version, time.Since(since).Round(100*time.Millisecond))
	}
	return nil
}

// rollback restores the manifests of components from the backup, the last
// one first, and waits for each: the node runs what it ran before.
func (r *Replacer) rollback(ctx context.Context, components []string, cause error) error {
	var errs []string
	for i := len(components) - 1; i >= 0; i-- {
		c := components[i]
		data, err := os.ReadFile(staticpod.Path(r.BackupDir, c))
		if err == nil {
			err = staticpod.ReplaceFile(r.ManifestsDir, c, data)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("restore %s: %v", c, err))
			continue
		}
		r.Progress("rolled back %s to its manifest in %s", c, r.BackupDir)
		// The restored manifest is the old pod the kubelet ran before; it
		// starts it anew, which the checker sees as a container since now.
		pod, err := staticpod.Read(staticpod.Path(r.ManifestsDir, c))
		if err == nil {
			err = r.Health.WaitHealthy(ctx, pod, time.Now().Add(-time.Second))
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s after rollback: %v", c, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w; rolling back this node's manifests from %s failed too: %s", cause, r.BackupDir, strings.Join(errs, "; "))
	}
	return fmt.Errorf("%w; this node's manifests were rolled back from %s and its control plane is healthy again", cause, r.BackupDir)
}
