package build

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// createdBy is the history line every layer carries, naming the tool that made it.
const createdBy = "trireme image-build"

// Image assembles the Spec's image: an empty base, the Spec's layer and a config with
// its entrypoint, command, environment, user and platform, all dated Spec.Created.
func Image(s Spec) (v1.Image, error) {
	layer, err := Layer(s)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Ref, err)
	}
	created := v1.Time{Time: createdTime(s)}
	img, err := mutate.ConfigFile(empty.Image, configFile(s, created))
	if err != nil {
		return nil, fmt.Errorf("image %s: set config: %w", s.Ref, err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: created, CreatedBy: createdBy},
	})
	if err != nil {
		return nil, fmt.Errorf("image %s: append layer: %w", s.Ref, err)
	}
	return img, nil
}

// configFile is the image config before the layer's diff ID and history are added.
func configFile(s Spec, created v1.Time) *v1.ConfigFile {
	osName, arch := s.OS, s.Architecture
	if osName == "" {
		osName = "linux"
	}
	if arch == "" {
		arch = "amd64"
	}
	return &v1.ConfigFile{
		Architecture: arch,
		OS:           osName,
		Created:      created,
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: s.Entrypoint,
			Cmd:        s.Cmd,
			Env:        withDefaultPath(s.Env),
			User:       s.User,
			WorkingDir: s.WorkingDir,
		},
	}
}

// withDefaultPath puts Docker's default PATH first unless env already sets PATH.
func withDefaultPath(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			return env
		}
	}
	return append([]string{defaultPath}, env...)
}

// tag parses the Spec's reference, demanding an explicit registry and tag so an image
// never ends up named docker.io/library/...:latest by accident.
func tag(s Spec) (name.Tag, error) {
	t, err := name.NewTag(s.Ref, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference %q: %w", s.Ref, err)
	}
	return t, nil
}
