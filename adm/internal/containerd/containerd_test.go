package containerd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
)

func TestRender(t *testing.T) {
	for _, restrict := range []bool{true, false} {
		dir := t.TempDir()
		conf, err := Render(Config{Root: dir + "/root", State: dir + "/state", Socket: dir + "/c.sock", OptDir: dir + "/opt",
			SandboxImage: "trireme.dev/pause:v1", RestrictOOMScoreAdj: restrict,
			CNIBinDir: "/usr/lib/cni", CNIConfDir: dir + "/net.d", CNITemplate: dir + "/t.json", RegistryHostsDir: dir + "/certs.d"})
		if err != nil {
			t.Fatal(err)
		}
		want := "restrict_oom_score_adj = false"
		if restrict {
			want = "restrict_oom_score_adj = true"
		}
		if !bytes.Contains(conf, []byte(want)) || !bytes.Contains(conf, []byte(`sandbox_image = "trireme.dev/pause:v1"`)) {
			t.Errorf("config:\n%s", conf)
		}
		// containerd itself parses the file: its effective configuration must carry
		// our values.
		if _, err := exec.LookPath("containerd"); err != nil {
			t.Fatal("containerd not found: apt-get install -y containerd (hack/install-deps.sh)")
		}
		path := filepath.Join(dir, "config.toml")
		os.WriteFile(path, conf, 0o644)
		dump, err := exec.Command("containerd", "--config", path, "config", "dump").CombinedOutput()
		if err != nil {
			t.Fatalf("containerd config dump: %v\n%s", err, dump)
		}
		for _, w := range []string{want, `conf_template = "` + dir + `/t.json"`, `bin_dir = "/usr/lib/cni"`, `address = "` + dir + `/c.sock"`, `runtime_type = "io.containerd.runc.v2"`, "netns_mounts_under_state_dir = true",
			`config_path = "` + dir + `/certs.d"`} {
			if !bytes.Contains(dump, []byte(w)) {
				t.Errorf("containerd's view lacks %q", w)
			}
		}
	}
}

// TestCNITemplate fills the template as containerd's CRI plugin does (fields
// PodCIDRRanges and Routes) and checks the result is the conflist we mean.
func TestCNITemplate(t *testing.T) {
	for _, ipMasq := range []bool{true, false} {
		t.Run(fmt.Sprintf("ipMasq=%v", ipMasq), func(t *testing.T) { testCNITemplate(t, ipMasq) })
	}
}

func testCNITemplate(t *testing.T, ipMasq bool) {
	tmpl, err := template.New("cni").Parse(string(CNITemplate("/var/lib/cni/networks/trireme", ipMasq)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, struct {
		PodCIDRRanges, Routes []string
	}{[]string{"10.244.1.0/24", "fd00:1::/64"}, []string{"0.0.0.0/0", "::/0"}}); err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			Type   string `json:"type"`
			Bridge string `json:"bridge"`
			IPMasq bool   `json:"ipMasq"`
			IPAM   struct {
				DataDir string                `json:"dataDir"`
				Type    string                `json:"type"`
				Ranges  [][]map[string]string `json:"ranges"`
				Routes  []map[string]string   `json:"routes"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(b.Bytes(), &conf); err != nil {
		t.Fatalf("filled template is not JSON: %v\n%s", err, b.String())
	}
	var types []string
	for _, p := range conf.Plugins {
		types = append(types, p.Type)
	}
	if strings.Join(types, ",") != "bridge,portmap" || conf.Plugins[0].IPAM.Type != "host-local" ||
		conf.Plugins[0].IPAM.Ranges[1][0]["subnet"] != "fd00:1::/64" || conf.Plugins[0].IPAM.Routes[0]["dst"] != "0.0.0.0/0" ||
		conf.Plugins[0].Bridge != BridgeName || conf.Plugins[0].IPMasq != ipMasq || conf.Plugins[0].IPAM.DataDir != "/var/lib/cni/networks/trireme" {
		t.Errorf("conflist %s", b.String())
	}
}

func TestHostDeniesLoweringOOMScore(t *testing.T) {
	denies, err := HostDeniesLoweringOOMScore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Cross-check in this process's own child: raising is always allowed, lowering
	// below the current value needs CAP_SYS_RESOURCE.
	err = exec.Command("/bin/sh", "-c", "echo -999 > /proc/self/oom_score_adj").Run()
	if denies != (err != nil) {
		t.Errorf("HostDeniesLoweringOOMScore = %v, but lowering to -999 gave %v", denies, err)
	}
	t.Logf("host denies lowering OOM scores: %v", denies)
}
