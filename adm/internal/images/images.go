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
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

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

// pullTimeout bounds one image pull: long enough for a large image from a
// slow registry, short enough that init does not hang on an unreachable one.
const pullTimeout = 5 * time.Minute

// Ensure makes sure containerd's CRI at socket holds every one of refs,
// pulling those it lacks from wherever its configuration reaches, as
// kubeadm's preflight does. progress is told of each pull. An image that is
// neither there nor pullable is an error naming each such image with the
// reason and how to import them: without it, the kubelet would retry the
// pod sandboxes for minutes while init waited for a control plane that
// cannot start.
func Ensure(ctx context.Context, socket string, refs []string, progress func(format string, args ...any)) error {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", socket, err)
	}
	defer conn.Close()
	is := runtimeapi.NewImageServiceClient(conn)
	var missing []string
	for _, ref := range refs {
		spec := &runtimeapi.ImageSpec{Image: ref}
		st, err := is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
		if err != nil {
			return fmt.Errorf("image status of %s: %w", ref, err)
		}
		if st.GetImage() != nil {
			continue
		}
		progress("pulling %s", ref)
		pctx, cancel := context.WithTimeout(ctx, pullTimeout)
		_, err = is.PullImage(pctx, &runtimeapi.PullImageRequest{Image: spec})
		cancel()
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s (%s)", ref, status.Convert(err).Message()))
			continue
		}
		progress("pulled %s", ref)
	}
	if len(missing) > 0 {
		return fmt.Errorf("containerd lacks %d image(s) this node runs and could not pull them: %s; "+
			"import them with `triremeadm images import --dir DIR` (`make images` writes them to _output/images), "+
			"or choose a --kubernetes-version or --image-repository whose images it has",
			len(missing), strings.Join(missing, "; "))
	}
	return nil
}

// Held returns the references (repo:tag) of every image containerd's CRI at
// socket holds.
func Held(ctx context.Context, socket string) (map[string]bool, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", socket, err)
	}
	defer conn.Close()
	list, err := runtimeapi.NewImageServiceClient(conn).ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return nil, fmt.Errorf("list images at %s: %w", socket, err)
	}
	held := map[string]bool{}
	for _, img := range list.Images {
		for _, t := range img.RepoTags {
			held[t] = true
		}
	}
	return held, nil
}
