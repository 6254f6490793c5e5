package cloudconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	api "trireme.dev/api/config/cloudconfig"
)

const good = `apiVersion: cloudconfig.config.trireme.dev/v1alpha1
kind: CloudConfiguration
machines:
- name: node-1
  zone: z1
  region: r1
  instanceType: vm.small
  addresses:
  - type: InternalIP
    address: 10.0.0.1
loadBalancer:
  pools:
  - name: default
    addresses: ["192.168.50.0/28"]
`

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		err  string // a substring of the error; "" for none
	}{
		{name: "good", in: good},
		{name: "empty", in: "", err: "no CloudConfiguration"},
		{name: "wrong kind", in: "apiVersion: v1\nkind: ConfigMap\n", err: `want CloudConfiguration`},
		{name: "syntax", in: "apiVersion: x\n  kind: : y\n", err: "line 2"},
		{name: "unknown field", in: strings.Replace(good, "  zone: z1\n", "  zone: z1\n  rack: 7\n", 1), err: `line 6: unknown field "machines[0].rack"`},
		{name: "wrong type", in: good + "removeUnlistedNodes: maybe\n", err: "line 15: removeUnlistedNodes must be true or false"},
		{name: "list expected", in: strings.Replace(good, `addresses: ["192.168.50.0/28"]`, "addresses: 192.168.50.0/28", 1), err: "line 14: loadBalancer.pools[0].addresses must be a list"},
		{name: "invalid address", in: strings.Replace(good, "address: 10.0.0.1", "address: 10.0.0", 1), err: "line 10: machines[0].addresses[0].address"},
		{name: "invalid pool", in: strings.Replace(good, "192.168.50.0/28", "192.168.50.1/28", 1), err: "line 14: loadBalancer.pools[0].addresses[0]"},
		{name: "two documents", in: good + "---\n" + good, err: "want one CloudConfiguration document"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Decode([]byte(tc.in))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Machines[0].ProviderID != "trireme://node-1" {
					t.Errorf("not defaulted: %+v", cfg.Machines[0])
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestWatcherReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cloud.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("not: [valid")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load of a malformed file: %v, want an error naming the file", err)
	}
	write(good)
	w, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var changes int
	w.OnChange(func(*api.CloudConfiguration) { changes++ })

	write(strings.Replace(good, "zone: z1", "zone: z2", 1))
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if z := w.Current().Machines[0].Zone; z != "z2" || changes != 1 {
		t.Fatalf("after a good change: zone %q, %d changes; want z2, 1", z, changes)
	}
	write(strings.Replace(good, "zone: z1", "zone: 'z 3'", 1))
	if err := w.Reload(); err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Fatalf("reload of an invalid file: %v, want an error naming line 5", err)
	}
	if z := w.Current().Machines[0].Zone; z != "z2" || changes != 1 {
		t.Fatalf("after a bad change: zone %q, %d changes; want the last good z2, 1", z, changes)
	}
	if err := w.Reload(); err != nil {
		t.Fatalf("the same bad file again is reported once: %v", err)
	}
}

// FuzzDecode feeds the decoder arbitrary files: it must return a
// configuration or an error, never panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(""))
	f.Add([]byte("apiVersion: cloudconfig.config.trireme.dev/v1alpha1\nkind: CloudConfiguration\nmachines: [{name: a, addresses: [{type: Foo}]}]\n"))
	f.Add([]byte("apiVersion: cloudconfig.config.trireme.dev/v1alpha1\nkind: CloudConfiguration\nloadBalancer: {pools: [{name: a, addresses: [10.0.0.9-10.0.0.1, 'fd00::/64']}]}\n"))
	f.Add([]byte("{\"apiVersion\": \"cloudconfig.config.trireme.dev/v1alpha1\", \"kind\": \"CloudConfiguration\", \"machines\": [1]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode(data)
		if err == nil && cfg == nil {
			t.Fatal("no configuration and no error")
		}
	})
}
