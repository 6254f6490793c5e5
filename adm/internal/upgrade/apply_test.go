package upgrade

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"trireme.dev/adm/internal/staticpod"
)

// fakeHealth answers for the pods the test says are healthy and records
// what it was asked.
type fakeHealth struct {
	unhealthy map[string]bool // image
	asked     []string        // component=image
}

func (f *fakeHealth) WaitHealthy(_ context.Context, pod *corev1.Pod, _ time.Time) error {
	img := pod.Spec.Containers[0].Image
	f.asked = append(f.asked, pod.Name+"="+img)
	if f.unhealthy[img] {
		return errors.New("liveness endpoint refused")
	}
	return nil
}

func writeManifests(t *testing.T, dir string, components ...string) {
	t.Helper()
	for _, c := range components {
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = c, "kube-system"
		pod.Spec.Containers = []corev1.Container{{Name: c, Image: "trireme.dev/" + staticpod.Images[c].Image + ":v1.37.0"}}
		data, err := yaml.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(staticpod.Path(dir, c), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func image(t *testing.T, dir, c string) string {
	t.Helper()
	pod, err := staticpod.Read(staticpod.Path(dir, c))
	if err != nil {
		t.Fatal(err)
	}
	return pod.Spec.Containers[0].Image
}

func TestReplace(t *testing.T) {
	order := []string{staticpod.Etcd, staticpod.APIServer, staticpod.ControllerManager, staticpod.Scheduler, staticpod.CloudControllerManager}
	for _, tc := range []struct {
		name      string
		unhealthy string // the image that never becomes healthy
		wantErr   bool
		want      map[string]string // component → tag after Replace
	}{
		{name: "all healthy", want: map[string]string{
			staticpod.Etcd: "v1.38.0", staticpod.APIServer: "v1.38.0", staticpod.ControllerManager: "v1.38.0", staticpod.Scheduler: "v1.38.0"}},
		{name: "controller-manager unhealthy rolls the node back", unhealthy: "trireme.dev/trireme-controller-manager:v1.38.0", wantErr: true,
			want: map[string]string{staticpod.Etcd: "v1.37.0", staticpod.APIServer: "v1.37.0", staticpod.ControllerManager: "v1.37.0", staticpod.Scheduler: "v1.37.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, backups := t.TempDir(), t.TempDir()
			writeManifests(t, dir, staticpod.Etcd, staticpod.APIServer, staticpod.ControllerManager, staticpod.Scheduler)
			backup, err := BackupManifests(dir, backups, time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(backup) != "triremeadm-backup-manifests-2026-12-02-18-00-00" {
				t.Errorf("backup dir %s", backup)
			}
			if got := image(t, backup, staticpod.APIServer); got != "trireme.dev/trireme-apiserver:v1.37.0" {
				t.Errorf("backed-up apiserver image %s", got)
			}
			h := &fakeHealth{unhealthy: map[string]bool{tc.unhealthy: true}}
			r := &Replacer{ManifestsDir: dir, BackupDir: backup, Repository: "trireme.dev", Version: "v1.38.0",
				Health: h, Progress: func(string, ...any) {}}
			err = r.Replace(context.Background(), order)
			if tc.wantErr != (err != nil) {
				t.Fatalf("err = %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), "rolled back") {
				t.Errorf("error does not say it rolled back: %v", err)
			}
			for c, tag := range tc.want {
				if got := Tag(image(t, dir, c)); got != tag {
					t.Errorf("%s at %s, want %s", c, got, tag)
				}
			}
			if _, err := os.Stat(staticpod.Path(dir, staticpod.CloudControllerManager)); !os.IsNotExist(err) {
				t.Errorf("a manifest that was not there was written: %v", err)
			}
			if tc.unhealthy != "" {
				// One at a time: the scheduler was never touched, and the
				// rollback waited for the restored pods, the last one first.
				want := []string{"etcd=trireme.dev/etcd:v1.38.0", "kube-apiserver=trireme.dev/trireme-apiserver:v1.38.0",
					"kube-controller-manager=trireme.dev/trireme-controller-manager:v1.38.0",
					"kube-controller-manager=trireme.dev/trireme-controller-manager:v1.37.0",
					"kube-apiserver=trireme.dev/trireme-apiserver:v1.37.0", "etcd=trireme.dev/etcd:v1.37.0"}
				if strings.Join(h.asked, " ") != strings.Join(want, " ") {
					t.Errorf("health checks:\n got %v\nwant %v", h.asked, want)
				}
			}
		})
	}
}

func TestMakePlan(t *testing.T) {
	order := []string{staticpod.Etcd, staticpod.APIServer, staticpod.ControllerManager, staticpod.Scheduler}
	running := State{
		StaticPods: map[string]string{staticpod.Etcd: "trireme.dev/etcd:v1.37.0", staticpod.APIServer: "trireme.dev/trireme-apiserver:v1.37.0",
			staticpod.Scheduler: "trireme.dev/trireme-scheduler:v1.37.0"},
		APIServer: "v1.37.0", Kubelets: map[string]string{"cp": "v1.37.0", "w1": "v1.36.1"},
		Installable: []string{"v1.37.0", "v1.38.0"},
	}
	need := func(v string) []string {
		return []string{"trireme.dev/etcd:" + v, "trireme.dev/trireme-apiserver:" + v}
	}
	held := map[string]bool{"trireme.dev/etcd:v1.38.0": true, "trireme.dev/trireme-apiserver:v1.38.0": true, "trireme.dev/etcd:v1.37.1": true}
	for _, tc := range []struct {
		name, target string
		wantSteps    int
		wantMissing  []string
		wantSkew     bool
	}{
		{name: "next minor with its images", target: "v1.38.0", wantSteps: 3},
		{name: "images missing", target: "v1.37.1", wantSteps: 3, wantMissing: []string{"trireme.dev/trireme-apiserver:v1.37.1"}},
		{name: "two minors up", target: "v1.39.0", wantSteps: 3, wantSkew: true,
			wantMissing: []string{"trireme.dev/etcd:v1.39.0", "trireme.dev/trireme-apiserver:v1.39.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := MakePlan(running, order, tc.target, need(tc.target), func(r string) bool { return held[r] }, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Steps) != tc.wantSteps || p.Steps[0].Component != staticpod.Etcd || p.Steps[0].From != "v1.37.0" {
				t.Errorf("steps %+v", p.Steps)
			}
			if strings.Join(p.Missing, ",") != strings.Join(tc.wantMissing, ",") {
				t.Errorf("missing %v, want %v", p.Missing, tc.wantMissing)
			}
			if (p.Skew != nil) != tc.wantSkew {
				t.Errorf("skew verdict %v", p.Skew)
			}
			var out strings.Builder
			p.Print(&out, running)
			verdict := "Verdict: allowed"
			if tc.wantSkew || len(tc.wantMissing) > 0 {
				verdict = "Verdict: REFUSED"
			}
			if !strings.Contains(out.String(), verdict) || !strings.Contains(out.String(), "kubelet on w1") {
				t.Errorf("plan output:\n%s", out.String())
			}
		})
	}
}
