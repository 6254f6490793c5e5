package podconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSubPath(t *testing.T) {
	vars := map[string]string{"POD_NAME": "web-0", "ANNOTATION": "mypath", "EMPTY": "", "UP": "..", "ABS": "/tmp"}
	tests := []struct {
		name      string
		mount     corev1.VolumeMount
		want      string
		wantError string
	}{
		{name: "none", mount: corev1.VolumeMount{}},
		{name: "plain subPath", mount: corev1.VolumeMount{SubPath: "a/b"}, want: "a/b"},
		{name: "expression", mount: corev1.VolumeMount{SubPathExpr: "$(ANNOTATION)/$(POD_NAME)"}, want: "mypath/web-0"},
		{name: "escaped dollar", mount: corev1.VolumeMount{SubPathExpr: "$$(POD_NAME)"}, want: "$(POD_NAME)"},
		{name: "unset variable", mount: corev1.VolumeMount{SubPathExpr: "$(NOPE)/$(EMPTY)/$(POD_NAME)"}, wantError: "missing value for EMPTY, NOPE"},
		{name: "expands to an absolute path", mount: corev1.VolumeMount{SubPathExpr: "$(ABS)"}, wantError: "error SubPath `/tmp` must not be an absolute path"},
		{name: "expands to a step up", mount: corev1.VolumeMount{SubPathExpr: "$(UP)"}, wantError: "unable to provision SubPath `..`: must not contain '..'"},
		{name: "step up inside", mount: corev1.VolumeMount{SubPath: "a/../../b"}, wantError: "must not contain '..'"},
		{name: "dots in a name are fine", mount: corev1.VolumeMount{SubPath: "a..b/c"}, want: "a..b/c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := subPath(&tc.mount, vars)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.wantError)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestSubPathOnHost(t *testing.T) {
	base := t.TempDir()
	vol := filepath.Join(base, "vol")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{vol, outside, filepath.Join(vol, "existing")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(vol, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vol, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("existing", filepath.Join(vol, "inner-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(vol, "escape")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, sub, want string
		wantErr         bool
	}{
		{name: "existing directory", sub: "existing", want: filepath.Join(vol, "existing")},
		{name: "existing file", sub: "file", want: filepath.Join(vol, "file")},
		{name: "missing directories are made", sub: "new/deeper", want: filepath.Join(vol, "new", "deeper")},
		{name: "link inside the volume", sub: "inner-link/made", want: filepath.Join(vol, "existing", "made")},
		{name: "link out of the volume", sub: "escape", wantErr: true},
		{name: "nothing made through a link out", sub: "escape/made", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := subPathOnHost(vol, tc.sub, "vol", "c")
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %q, want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(vol, "new", "deeper")); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o777 {
		t.Errorf("made directory has mode %v, want the volume's 0777 whatever the umask", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(outside, "made")); !os.IsNotExist(err) {
		t.Errorf("a directory was made outside the volume: %v", err)
	}
}
