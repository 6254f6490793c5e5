package imagelocality

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func TestScore(t *testing.T) {
	withImage := plugintest.Node("cached", "4")
	withImage.Status.Images = []v1.ContainerImage{{Names: []string{"example.com/big:1.0"}, SizeBytes: 500 * mb}}
	nodes := []*v1.Node{withImage, plugintest.Node("empty", "4")}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, nil)
	p := plugintest.Pod("p", "", "")
	p.Spec.Containers[0].Image = "example.com/big:1.0"
	got := h.Score(t, p)
	if got["empty"] != 0 || got["cached"] <= 0 {
		t.Errorf("scores %v: want the node holding the image higher", got)
	}
	// 500MB on 1 of 2 nodes scales to 250MB: (250-23)*100/(1000-23) = 23.
	if got["cached"] != 23 {
		t.Errorf("cached score %d, want 23", got["cached"])
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                  "nginx:latest",
		"nginx:1.0":              "nginx:1.0",
		"example.com:5000/nginx": "example.com:5000/nginx:latest",
		"nginx@sha256:abc":       "nginx@sha256:abc",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
