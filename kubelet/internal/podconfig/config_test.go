package podconfig

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

// dirs is a PodDirs below one directory.
type dirs string

func (d dirs) PodDir(uid types.UID) string { return filepath.Join(string(d), string(uid)) }

// TestContainerConfig: the termination-message file is writable by any
// user the container runs as, at the path the container asks for, and
// an ephemeral container joins its target's process namespace unless
// the pod shares one already.
func TestContainerConfig(t *testing.T) {
	tests := []struct {
		name       string
		spec       corev1.Container
		ctype      string
		targetID   string
		sharePID   bool
		wantPath   string
		wantPID    runtimeapi.NamespaceMode
		wantTarget string
	}{
		{name: "non-root at a custom path", spec: corev1.Container{Name: "app", TerminationMessagePath: "/dev/termination-custom-log",
			SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](10000)}},
			ctype: ContainerTypeRegular, wantPath: "/dev/termination-custom-log", wantPID: runtimeapi.NamespaceMode_CONTAINER},
		{name: "default path", spec: corev1.Container{Name: "app"}, ctype: ContainerTypeRegular,
			wantPath: corev1.TerminationMessagePathDefault, wantPID: runtimeapi.NamespaceMode_CONTAINER},
		{name: "ephemeral with a target", spec: corev1.Container{Name: "debugger"}, ctype: ContainerTypeEphemeral, targetID: "c1",
			wantPath: corev1.TerminationMessagePathDefault, wantPID: runtimeapi.NamespaceMode_TARGET, wantTarget: "c1"},
		{name: "ephemeral in a pod sharing its processes", spec: corev1.Container{Name: "debugger"}, ctype: ContainerTypeEphemeral, targetID: "c1", sharePID: true,
			wantPath: corev1.TerminationMessagePathDefault, wantPID: runtimeapi.NamespaceMode_POD},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			b := &Builder{PodLogsDir: filepath.Join(root, "logs"), PodDirs: dirs(filepath.Join(root, "pods"))}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p-uid"},
				Spec: corev1.PodSpec{ShareProcessNamespace: ptr.To(tt.sharePID)}}
			cc, err := b.ContainerConfig(context.Background(), &Container{Pod: pod, Spec: &tt.spec, Type: tt.ctype, TargetID: tt.targetID, ImageRef: "busybox"})
			if err != nil {
				t.Fatal(err)
			}
			var term *runtimeapi.Mount
			for _, m := range cc.Mounts {
				if m.ContainerPath == tt.wantPath {
					term = m
				}
			}
			if term == nil {
				t.Fatalf("no mount at %s: %v", tt.wantPath, cc.Mounts)
			}
			fi, err := os.Stat(term.HostPath)
			if err != nil {
				t.Fatal(err)
			}
			if mode := fi.Mode().Perm(); mode != 0o666 {
				t.Errorf("termination-message file mode %o, want 666", mode)
			}
			if got := cc.Annotations[AnnotationTerminationMessagePath]; got != tt.wantPath {
				t.Errorf("path annotation %q, want %q", got, tt.wantPath)
			}
			if got := cc.Labels[LabelContainerType]; got != tt.ctype {
				t.Errorf("type label %q, want %q", got, tt.ctype)
			}
			ns := cc.Linux.SecurityContext.NamespaceOptions
			if ns.Pid != tt.wantPID || ns.TargetId != tt.wantTarget {
				t.Errorf("pid namespace %s target %q, want %s %q", ns.Pid, ns.TargetId, tt.wantPID, tt.wantTarget)
			}
		})
	}
}

// TestFindContainer: init, app and ephemeral containers are found by name.
func TestFindContainer(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers:      []corev1.Container{{Name: "init", Image: "i"}},
		Containers:          []corev1.Container{{Name: "app", Image: "a"}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "d", TTY: true}}},
	}}
	for _, tt := range []struct{ name, image string }{{"init", "i"}, {"app", "a"}, {"debugger", "d"}, {"none", ""}} {
		t.Run(tt.name, func(t *testing.T) {
			c := FindContainer(pod, tt.name)
			if (c == nil) != (tt.image == "") || (c != nil && c.Image != tt.image) {
				t.Errorf("FindContainer(%q) = %+v, want image %q", tt.name, c, tt.image)
			}
		})
	}
	if c := FindContainer(pod, "debugger"); !c.TTY {
		t.Errorf("ephemeral container lost its fields: %+v", c)
	}
}
