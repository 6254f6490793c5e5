package reset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/cgroups"
)

func TestReadKubeletConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content  string
		write, wantErr bool
		wantRoot       string
	}{
		{name: "missing file", write: false},
		{name: "cgroup root", write: true, content: "kind: KubeletConfiguration\ncgroupRoot: /trireme-w1\n", wantRoot: "/trireme-w1"},
		{name: "malformed", write: true, content: "cgroupRoot: [\n", wantErr: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, tt.name+".yaml")
			if tt.write {
				if err := os.WriteFile(file, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			kc, found, err := readKubeletConfig(file)
			if (err != nil) != tt.wantErr {
				t.Fatalf("case %d: err = %v, want error %v", i, err, tt.wantErr)
			}
			if err == nil && found != tt.write {
				t.Errorf("found = %v for a file written: %v", found, tt.write)
			}
			if err == nil && kc.CgroupRoot != tt.wantRoot {
				t.Errorf("cgroupRoot = %q, want %q", kc.CgroupRoot, tt.wantRoot)
			}
		})
	}
}

func TestRemovePodCgroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil || len(mounts) == 0 {
		t.Skipf("no cgroup hierarchy mounted: %v", err)
	}
	root := "/trireme-reset-test-" + filepath.Base(t.TempDir())
	for _, m := range mounts {
		if err := os.MkdirAll(filepath.Join(m.Mountpoint, root, "kubepods/besteffort/podx"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, m := range mounts {
			_ = cgroups.RemovePath(filepath.Join(m.Mountpoint, root))
		}
	})
	found, err := RemovePodCgroups(root)
	if err != nil || !found {
		t.Fatalf("RemovePodCgroups(%s) = %v, %v; want true, nil", root, found, err)
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m.Mountpoint, root)); !os.IsNotExist(err) {
			t.Errorf("%s still exists (stat: %v)", filepath.Join(m.Mountpoint, root), err)
		}
	}
	if found, err := RemovePodCgroups(root); found || err != nil {
		t.Errorf("second RemovePodCgroups = %v, %v; want false, nil", found, err)
	}
}
