package apiserver_test

import (
	"strings"
	"testing"
	"time"
)

// watchLineTimeout bounds how long a watch may take to print a change.
const watchLineTimeout = 30 * time.Second

func TestGetPodsWatchPrintsChanges(t *testing.T) {
	ns := newNamespace(t, "watch")
	wantStdout(t, kubectlOK(t, "-n", ns, "run", "first", "--image=busybox", "--restart=Never", "--", "sleep", "3600"), "pod/first created\n")

	w := srv.KubectlCmd("-n", ns, "get", "pods", "-w").Start(t)
	fields := func(line string) []string { return strings.Fields(line) }
	header, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "NAME") })
	if err != nil {
		t.Fatal(err)
	}
	// Printing is checked apart from watching: a wrong header must not hide
	// whether changes arrive.
	if got := strings.Join(fields(header), " "); got != "NAME READY STATUS RESTARTS AGE" {
		t.Errorf("watch header = %q, want upstream's NAME READY STATUS RESTARTS AGE", header)
	}
	// first was there before the watch began: it comes from the initial list.
	if _, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "first ") }); err != nil {
		t.Fatal(err)
	}

	// second only exists after the list, so its line can only come from
	// the watch.
	wantStdout(t, kubectlOK(t, "-n", ns, "run", "second", "--image=busybox", "--restart=Never", "--", "sleep", "3600"), "pod/second created\n")
	line, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "second ") })
	if err != nil {
		t.Fatal(err)
	}
	if f := fields(line); len(f) != 5 || f[1] != "0/1" || f[2] != "Pending" || f[3] != "0" {
		t.Errorf("watch line for second = %q, want NAME 0/1 Pending 0 AGE", line)
	}

	// A modification shows up as another line for the same pod.
	kubectlOK(t, "-n", ns, "label", "pod", "first", "seen=yes")
	if _, err := w.WaitForLine(watchLineTimeout, func(l string) bool { return strings.HasPrefix(l, "first ") }); err != nil {
		t.Fatal(err)
	}
	if stderr := w.Stop(); stderr != "" {
		t.Errorf("kubectl get -w wrote to stderr:\n%s", stderr)
	}
}
