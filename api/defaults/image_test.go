package defaults

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Expected values follow upstream SetDefaults_Container
// (pkg/apis/core/v1/defaults.go): the tag from pkg/util/parsers.ParseImageName
// (github.com/distribution/reference.ParseNormalizedNamed, "latest" when
// neither tag nor digest is given) decides Always versus IfNotPresent, and a
// parse error leaves the tag empty, hence IfNotPresent.
func TestPullPolicy(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	cases := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"library/nginx", corev1.PullAlways},
		{"docker.io/library/nginx:latest", corev1.PullAlways},
		{"index.docker.io/nginx", corev1.PullAlways},
		{"localhost/app", corev1.PullAlways},
		{"localhost:5000/team/app", corev1.PullAlways},
		{"registry.example.com:5000/team/app:latest", corev1.PullAlways},
		{"[::1]:5000/app", corev1.PullAlways},
		{"nginx:1.27", corev1.PullIfNotPresent},
		{"nginx:Latest", corev1.PullIfNotPresent}, // tags are case-sensitive
		{"nginx@" + digest, corev1.PullIfNotPresent},
		{"nginx:latest@" + digest, corev1.PullAlways}, // the tag still reads latest
		{"quay.io/org/app:v2", corev1.PullIfNotPresent},
		// Invalid references: error, empty tag, IfNotPresent.
		{"", corev1.PullIfNotPresent},
		{"Nginx", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:short", corev1.PullIfNotPresent},
		{"nginx:latest@md5:" + strings.Repeat("a", 32), corev1.PullIfNotPresent},
		{"nginx:latest@sha256:" + strings.Repeat("A", 64), corev1.PullIfNotPresent},
		{strings.Repeat("a", 64), corev1.PullIfNotPresent}, // a bare image ID
		{"nginx::latest", corev1.PullIfNotPresent},
		{"-nginx", corev1.PullIfNotPresent},
		{"example.com/" + strings.Repeat("a", 250), corev1.PullIfNotPresent}, // name over 255 characters
	}
	for _, tc := range cases {
		t.Run("image="+tc.image, func(t *testing.T) {
			if got := pullPolicy(tc.image); got != tc.want {
				t.Errorf("pullPolicy(%q) = %s, want %s", tc.image, got, tc.want)
			}
		})
	}
}
