package addons

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"

	"trireme.dev/charts"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// inputs are the values a three-node cluster with triremeadm's defaults gets.
var inputs = Inputs{
	ImageRegistry: "trireme.dev", ImageTag: "v1.37.0-trireme.test",
	ClusterDomain: "cluster.local", DNSServiceIP: "10.96.0.10",
	PodSubnet: "10.244.0.0/16", ServiceSubnet: "10.96.0.0/12",
}

// fixedTLS gives metrics-server's aggregated API a certificate from
// testdata, so that the golden files do not change with the one the chart
// would otherwise generate at every render.
func fixedTLS(t *testing.T) map[string]any {
	t.Helper()
	tls := map[string]any{}
	for key, file := range map[string]string{"ca": "ca.crt", "cert": "tls.crt", "key": "tls.key"} {
		pem, err := os.ReadFile(filepath.Join("testdata", "metrics-server-tls", file))
		if err != nil {
			t.Fatal(err)
		}
		tls[key] = string(pem)
	}
	return map[string]any{"metrics-server": map[string]any{"tls": tls}}
}

var (
	generatedPEM = regexp.MustCompile(`(?s)-----BEGIN ([A-Z ]+)-----.*?-----END [A-Z ]+-----`)
	generatedB64 = regexp.MustCompile(`((?:ca|tls)\.(?:crt|key)): [A-Za-z0-9+/=]+`)
)

// maskGenerated replaces what the chart makes afresh at every render, the
// dashboard's CA and certificate, with placeholders, so that the golden
// files compare everything else.
func maskGenerated(rendered string) string {
	docs := strings.Split(rendered, "\n---\n")
	for i, d := range docs {
		if strings.Contains(d, "# Source: trireme-addons/charts/dashboard/templates/tls.yaml") {
			d = generatedPEM.ReplaceAllString(d, "<generated $1>")
			docs[i] = generatedB64.ReplaceAllString(d, "$1: <generated>")
		}
	}
	return strings.Join(docs, "\n---\n")
}

func TestGolden(t *testing.T) {
	fixed := inputs
	fixed.User = fixedTLS(t)
	single := fixed
	single.SingleNode = true
	// An external cloud provider: the LoadBalancer announcer runs.
	fixed.LoadBalancerAnnouncer = true
	// The end-to-end suite's nodes: the init node below its --root-dir, two
	// workers with directories of their own on the same file system.
	rooted := fixed
	rooted.LocalPathDir = "/tmp/e2e/host/var/lib/trireme/local-path"
	rooted.FlannelPaths = &FlannelPaths{CNIConfDir: "/tmp/e2e/host/etc/cni/net.d",
		CNIDataDir: "/tmp/e2e/host/var/lib/cni/networks/trireme", RunDir: "/tmp/e2e/host/run/flannel"}
	rooted.User = fixedTLS(t)
	rooted.User["flannel"] = map[string]any{"backend": "host-gw", "nodePaths": map[string]any{
		"worker-1": map[string]any{"cniConfDir": "/tmp/e2e/w1/etc/cni/net.d", "cniDataDir": "/tmp/e2e/w1/var/lib/cni/networks/trireme", "runDir": "/tmp/e2e/w1/run/flannel"},
		"worker-2": map[string]any{"cniConfDir": "/tmp/e2e/w2/etc/cni/net.d"},
	}}
	for _, tc := range []struct {
		name string
		in   Inputs
	}{
		{"defaults", fixed},
		{"single-node", single},
		{"node-paths", rooted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := Chart("v1.37.0-trireme.test")
			if err != nil {
				t.Fatal(err)
			}
			got, err := Render(ch, Values(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			got = maskGenerated(got)
			golden := filepath.Join("testdata", tc.name+".yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from what the chart renders (-want +got; go test -update rewrites it):\n%s", golden, cmp.Diff(string(want), got))
			}
		})
	}
}

// TestLintStrict is `helm lint --strict --with-subcharts` on the chart as
// triremeadm embeds it.
func TestLintStrict(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, charts.Addons); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, charts.AddonsDir)
	paths := []string{root}
	subs, err := fs.Glob(charts.Addons, charts.AddonsDir+"/charts/*/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		paths = append(paths, filepath.Join(dir, filepath.Dir(s)))
	}
	kv, err := common.ParseKubeVersion("v1.37.0")
	if err != nil {
		t.Fatal(err)
	}
	l := action.NewLint()
	l.Strict, l.Namespace, l.KubeVersion = true, Namespace, kv
	res := l.Run(paths, nil)
	if res.TotalChartsLinted != len(paths) {
		t.Errorf("linted %d charts, want %d", res.TotalChartsLinted, len(paths))
	}
	for _, m := range res.Messages {
		t.Logf("%s", m)
	}
	for _, err := range res.Errors {
		t.Errorf("lint: %v", err)
	}
}

// TestSchemaRefusesBadValues: a value of the wrong type or an unknown key is
// refused with its field named, before anything reaches the cluster.
func TestSchemaRefusesBadValues(t *testing.T) {
	ch, err := Chart("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		user map[string]any
		want string
	}{
		{"wrong type", map[string]any{"coredns": map[string]any{"replicas": "two"}}, "replicas"},
		{"unknown addon", map[string]any{"nosuchaddon": map[string]any{"enabled": true}}, "nosuchaddon"},
		{"unknown global", map[string]any{"global": map[string]any{"imageRegistery": "x"}}, "imageRegistery"},
		{"bad enabled", map[string]any{"coredns": map[string]any{"enabled": "yes"}}, "enabled"},
		{"unknown metrics-server key", map[string]any{"metrics-server": map[string]any{"replica": 2}}, "replica"},
		{"metrics-server flag without dashes", map[string]any{"metrics-server": map[string]any{"extraArgs": []any{"v=2"}}}, "extraArgs"},
		{"unknown flannel backend", map[string]any{"flannel": map[string]any{"backend": "udp"}}, "backend"},
		{"relative flannel path", map[string]any{"flannel": map[string]any{"nodePaths": map[string]any{"n1": map[string]any{"runDir": "run/flannel"}}}}, "runDir"},
		{"unknown flannel path", map[string]any{"flannel": map[string]any{"paths": map[string]any{"cniBinDir": "/opt/cni/bin"}}}, "cniBinDir"},
		{"unknown netpol key", map[string]any{"netpol": map[string]any{"port": 10262}}, "port"},
		{"netpol sync period without a unit", map[string]any{"netpol": map[string]any{"syncPeriod": "60"}}, "syncPeriod"},
		{"netpol flag without dashes", map[string]any{"netpol": map[string]any{"extraArgs": []any{"v=2"}}}, "extraArgs"},
		{"unknown traefik key", map[string]any{"traefik": map[string]any{"replica": 2}}, "replica"},
		{"traefik Service of an unknown type", map[string]any{"traefik": map[string]any{"service": map[string]any{"type": "ExternalName"}}}, "type"},
		{"traefik flag without dashes", map[string]any{"traefik": map[string]any{"extraArgs": []any{"log.level=DEBUG"}}}, "extraArgs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs
			in.User = tc.user
			_, err := Render(ch, Values(in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render with %v: error %v, want one naming %q", tc.user, err, tc.want)
			}
		})
	}
}

func TestValuesLocalPathDir(t *testing.T) {
	for _, tc := range []struct {
		name, dir string
		user      map[string]any
		want      string
	}{
		{"real machine keeps the chart's default", "", nil, "<nil>"},
		{"below a root", "/tmp/r/var/lib/trireme/local-path", nil, "[map[node:DEFAULT_PATH_FOR_NON_LISTED_NODES paths:[/tmp/r/var/lib/trireme/local-path]]]"},
		{"the user's map wins", "/tmp/r/var/lib/trireme/local-path",
			map[string]any{"local-path": map[string]any{"nodePathMap": []any{map[string]any{"node": "n1", "paths": []any{"/data"}}}}},
			"[map[node:n1 paths:[/data]]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs
			in.LocalPathDir, in.User = tc.dir, tc.user
			var got any
			if lp, ok := Values(in)["local-path"].(map[string]any); ok {
				got = lp["nodePathMap"]
			}
			if s := fmt.Sprint(got); s != tc.want {
				t.Errorf("local-path.nodePathMap = %s, want %s", s, tc.want)
			}
		})
	}
}

func TestValuesFlannelPaths(t *testing.T) {
	rooted := &FlannelPaths{CNIConfDir: "/tmp/r/etc/cni/net.d", CNIDataDir: "/tmp/r/var/lib/cni/networks/trireme", RunDir: "/tmp/r/run/flannel"}
	for _, tc := range []struct {
		name  string
		paths *FlannelPaths
		user  map[string]any
		want  string
	}{
		{"real machine keeps the chart's default", nil, nil, "<nil>"},
		{"below a root", rooted, nil, "map[cniConfDir:/tmp/r/etc/cni/net.d cniDataDir:/tmp/r/var/lib/cni/networks/trireme runDir:/tmp/r/run/flannel]"},
		{"the user's path wins", rooted, map[string]any{"flannel": map[string]any{"paths": map[string]any{"runDir": "/srv/flannel"}}},
			"map[cniConfDir:/tmp/r/etc/cni/net.d cniDataDir:/tmp/r/var/lib/cni/networks/trireme runDir:/srv/flannel]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := inputs
			in.FlannelPaths, in.User = tc.paths, tc.user
			var got any
			if f, ok := Values(in)["flannel"].(map[string]any); ok {
				got = f["paths"]
			}
			if s := fmt.Sprint(got); s != tc.want {
				t.Errorf("flannel.paths = %s, want %s", s, tc.want)
			}
		})
	}
}

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		user map[string]any
		want bool
	}{
		{"no values", nil, true},
		{"other addon off", map[string]any{"coredns": map[string]any{"enabled": false}}, true},
		{"values without enabled", map[string]any{"flannel": map[string]any{"backend": "host-gw"}}, true},
		{"on", map[string]any{"flannel": map[string]any{"enabled": true}}, true},
		{"off", map[string]any{"flannel": map[string]any{"enabled": false}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Enabled(tc.user, "flannel"); got != tc.want {
				t.Errorf("Enabled(%v, flannel) = %v, want %v", tc.user, got, tc.want)
			}
		})
	}
}
