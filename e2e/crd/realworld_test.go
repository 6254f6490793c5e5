package crd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// realWorldCRDs are projects whose CRD manifests ship inside their Go
// modules, pinned so the suite always installs the same YAML; the module
// proxy serves them to CI as to developers.
var realWorldCRDs = []struct {
	module, version, dir string
}{
	{"github.com/cert-manager/cert-manager", "v1.21.2", "deploy/crds"},
	{"github.com/prometheus-operator/prometheus-operator", "v0.85.0", "example/prometheus-operator-crd"},
}

// moduleDir downloads module@version into the module cache (a no-op when
// it is there) and returns its directory.
func moduleDir(t *testing.T, module, version string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v\n%s%s", module, version, err, out, stderr.String())
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s\n%s", module, version, err, info.Error, out)
	}
	return info.Dir
}

// TestRealWorldCRDs installs cert-manager's and the Prometheus Operator's
// CRDs with server-side apply, creates one object of every kind they
// define, and checks that kubectl shows each kind's printer columns and
// explains its fields.
func TestRealWorldCRDs(t *testing.T) {
	for _, p := range realWorldCRDs {
		dir := filepath.Join(moduleDir(t, p.module, p.version), p.dir)
		res := kubectlOK(t, "apply", "--server-side", "-f", dir)
		if n := strings.Count(res.Stdout, "serverside-applied"); n == 0 {
			t.Fatalf("%s: nothing applied:\n%s", p.module, res)
		}
		kubectlOK(t, "wait", "--for", "condition=Established", "--timeout", "60s", "-f", dir)
	}

	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := json.Unmarshal([]byte(kubectlOK(t, "get", "crd", "-o", "json").Stdout), &crds); err != nil {
		t.Fatalf("decode CRDs: %v", err)
	}
	byKind := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for i := range crds.Items {
		c := &crds.Items[i]
		byKind[c.Spec.Group+"/"+c.Spec.Names.Kind] = c
	}

	ns := newNamespace(t, "realworld")
	manifest, err := os.ReadFile("testdata/realworld.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kubectlStdinOK(t, string(manifest), "apply", "-n", ns, "-f", "-")

	for _, doc := range strings.Split(string(manifest), "\n---\n") {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatalf("decode testdata object: %v", err)
		}
		gvk := obj.GroupVersionKind()
		t.Run(gvk.Kind, func(t *testing.T) {
			crd := byKind[gvk.Group+"/"+gvk.Kind]
			if crd == nil {
				t.Fatalf("no CRD defines %s", gvk)
			}
			want := []string{"NAME"}
			for _, v := range crd.Spec.Versions {
				if v.Name != gvk.Version {
					continue
				}
				for _, c := range v.AdditionalPrinterColumns {
					if c.Priority == 0 {
						want = append(want, strings.ToUpper(c.Name))
					}
				}
			}
			if len(want) == 1 {
				want = append(want, "AGE")
			}
			args := []string{"get", crd.Spec.Names.Plural + "." + crd.Spec.Group, obj.GetName()}
			if crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
				args = append(args, "-n", ns)
			}
			out := kubectlOK(t, args...).Stdout
			if got := header(out); !slices.Equal(got, want) {
				t.Errorf("kubectl %s: columns %v, want %v\n%s", strings.Join(args, " "), got, want, out)
			}
			if !strings.Contains(out, "\n"+obj.GetName()+" ") {
				t.Errorf("kubectl %s does not show %s:\n%s", strings.Join(args, " "), obj.GetName(), out)
			}
		})
	}

	t.Run("explain", func(t *testing.T) {
		out := kubectlOK(t, "explain", "prometheuses.monitoring.coreos.com.spec.replicas").Stdout
		if !strings.Contains(out, "replicas <integer>") {
			t.Errorf("kubectl explain of a custom resource's field:\n%s", out)
		}
		out = kubectlOK(t, "explain", "certificates.spec.issuerRef", "--api-version", "cert-manager.io/v1").Stdout
		if !strings.Contains(out, "issuerRef <Object>") || !strings.Contains(out, "name") {
			t.Errorf("kubectl explain of a custom resource's object field:\n%s", out)
		}
	})

	t.Run("CEL rule of a real CRD", func(t *testing.T) {
		bad := "apiVersion: monitoring.coreos.com/v1alpha1\nkind: PrometheusAgent\nmetadata: {name: daemon}\nspec: {mode: DaemonSet, replicas: 2}\n"
		res := srv.KubectlStdin(t, bad, "apply", "-n", ns, "-f", "-")
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "replicas cannot be set when mode is DaemonSet") {
			t.Errorf("a PrometheusAgent breaking its CRD's CEL rule: want refusal with the rule's message, got %s", res)
		}
	})

	t.Run("categories and short names", func(t *testing.T) {
		out := kubectlOK(t, "get", "cert-manager", "-n", ns).Stdout
		for _, want := range []string{"issuer.cert-manager.io/selfsigned", "certificate.cert-manager.io/web"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl get cert-manager lacks %s:\n%s", want, out)
			}
		}
		if out := kubectlOK(t, "get", "smon", "-n", ns).Stdout; !strings.Contains(out, "web") {
			t.Errorf("kubectl get smon (short name):\n%s", out)
		}
	})
}
