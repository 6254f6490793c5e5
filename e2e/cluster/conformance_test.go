package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

// subsetImages are the test images the subset's specs run (of e2e.test
// v1.37's manifest; StatefulSets run the previous agnhost): building and
// importing only these keeps the test short.
const subsetImages = `/(agnhost:2\.66\.1|agnhost:2\.55|busybox:1\.37\.0-2|nginx:1\.27\.0-2|nonroot:1\.5|pause:3\.10\.2)$`

// TestConformanceSubset runs CI's fixed subset of upstream's own
// [Conformance] specs (hack/conformance-ci.txt: a few of every SIG) against
// the suite's cluster, with the e2e.test, ginkgo, kubectl and test images
// `hack/conformance.sh build` made of the libraries' Kubernetes release. The
// whole suite is `make conformance`; this catches a regression in any SIG
// within minutes.
func TestConformanceSubset(t *testing.T) {
	begin(t)
	root := testcluster.RepoRoot()
	script := filepath.Join(root, "hack/conformance.sh")
	env := append(os.Environ(),
		"KUBECONFIG="+suite.admin,
		"CONTAINERD_ADDRESS="+filepath.Join(suite.root, "run/containerd/containerd.sock"),
		// Only the suite's node: never a `make up` worker left on the machine.
		"TRIREME_NODES_DIR="+t.TempDir(),
		"CONFORMANCE_LIST="+filepath.Join(root, "hack/conformance-ci.txt"),
		"CONFORMANCE_IMAGES="+subsetImages,
	)
	for _, step := range []string{"images", "check", "run"} {
		cmd := exec.Command(script, step)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		if step == "run" {
			// The summary and any failed spec's name and reason, for the CI log.
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "overall: ") || strings.HasPrefix(l, "  FAIL: ") || strings.HasPrefix(l, "    WHY: ") || strings.HasPrefix(l, "wall time ") {
					t.Log(l)
				}
			}
		}
		if err != nil {
			t.Fatalf("hack/conformance.sh %s: %v\n%s", step, err, testcluster.Tail(string(out), 60))
		}
	}
}
