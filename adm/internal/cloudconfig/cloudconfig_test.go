package cloudconfig

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	api "trireme.dev/api/config/cloudconfig"
)

func TestWriteDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cloud", "cloud-config.yaml")
	if _, wrote, err := WriteDefault(path); err != nil || !wrote {
		t.Fatalf("first write: wrote %v, %v", wrote, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &api.CloudConfiguration{}
	if err := yaml.UnmarshalStrict(raw, cfg); err != nil {
		t.Fatal(err)
	}
	if errs := api.Validate(cfg); len(errs) > 0 {
		t.Fatalf("the default file is invalid: %v", errs)
	}
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, wrote, err := WriteDefault(path); err != nil || wrote {
		t.Fatalf("second write: wrote %v, %v; an existing file is the user's", wrote, err)
	}
}
