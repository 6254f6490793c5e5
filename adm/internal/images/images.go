// Package images lists the images a Trireme version needs and imports image
// archives (`make images` writes them to _output/images/*.tar) into containerd's
// k8s.io namespace, where the CRI plugin finds them, with `ctr images import`.
package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Names are the Trireme images a node needs, as `make images` names them:
// trireme.dev/<name>:<version>.
var Names = []string{
	"etcd",
	"trireme-apiserver",
	"trireme-controller-manager",
	"trireme-scheduler",
	"proxy",
	"coredns",
	"pause",
	"trireme-vip",
}

// List returns the references of every image a version needs.
func List(repository, version string) []string {
	out := make([]string, len(Names))
	for i, n := range Names {
		out[i] = repository + "/" + n + ":" + version
	}
	return out
}

// Archives returns the *.tar files of dir, sorted.
func Archives(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no image archives (*.tar) in %s (run `make images`)", dir)
	}
	sort.Strings(files)
	return files, nil
}

// Import loads each archive into containerd's k8s.io namespace at socket and
// returns the image references now there that the archives named.
func Import(ctx context.Context, socket string, archives []string) ([]string, error) {
	var refs []string
	for _, a := range archives {
		if _, err := os.Stat(a); err != nil {
			return refs, err
		}
		out, err := exec.CommandContext(ctx, "ctr", "--address", socket, "--namespace", "k8s.io",
			"images", "import", a).CombinedOutput()
		if err != nil {
			return refs, fmt.Errorf("import %s: %w: %s", a, err, strings.TrimSpace(string(out)))
		}
		for _, line := range strings.Split(string(out), "\n") {
			// ctr prints "unpacking <ref> (sha256:...)...done" per image.
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "unpacking" {
				refs = append(refs, f[1])
			}
		}
	}
	return refs, nil
}

// Present returns which of refs containerd's k8s.io namespace at socket holds.
func Present(ctx context.Context, socket string, refs []string) (map[string]bool, error) {
	out, err := exec.CommandContext(ctx, "ctr", "--address", socket, "--namespace", "k8s.io", "images", "ls", "-q").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("ctr images ls: %w: %s", err, strings.TrimSpace(string(out)))
	}
	have := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		have[l] = true
	}
	got := map[string]bool{}
	for _, r := range refs {
		got[r] = have[r]
	}
	return got, nil
}
