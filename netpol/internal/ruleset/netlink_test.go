package ruleset

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"

	"trireme.dev/componentbase/netns"
	"trireme.dev/netpol/internal/policy"
)

// TestNetlinkMatchesNft walks the golden scenarios, each to every other,
// in two network namespaces: one writer sends its incremental syncs over
// nfnetlink, the other through nft only. After every step both tables
// must list alike: the rule compiler and the batch encoder mean exactly
// what the nft text means. Most steps must have gone over netlink.
func TestNetlinkMatchesNft(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nft is not installed")
	}
	p := fmt.Sprintf("tnp-nl-%d", os.Getpid()%100000)
	nlNS, nftNS := p+"-a", p+"-b"
	for _, ns := range []string{nlNS, nftNS} {
		netns.IP(t, "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	writer := func(ns string, netlink bool) *Writer {
		var w *Writer
		if err := netns.Run(ns, func() (err error) {
			w, err = NewWriter()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !netlink {
			w.Netlink = nil
		}
		return w
	}
	nl, nft := writer(nlNS, true), writer(nftNS, false)
	list := func(ns string) []string {
		out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "table", string(Family), Table).CombinedOutput()
		if err != nil {
			t.Fatalf("nft list: %v: %s", err, out)
		}
		return sortedLines(string(out))
	}
	// Every scenario followed by every other: each ordered pair once.
	var steps []scenario
	all := scenarios()
	for i, from := range all {
		for _, to := range all[i+1:] {
			steps = append(steps, from, to)
		}
	}
	ctx := context.Background()
	viaNetlink := 0
	for i, s := range steps {
		want := Render(policy.Resolve(s.state()))
		for _, w := range []struct {
			ns string
			w  *Writer
		}{{nlNS, nl}, {nftNS, nft}} {
			if err := netns.Run(w.ns, func() error { _, err := w.w.Sync(ctx, want); return err }); err != nil {
				t.Fatalf("step %d (%s), %s: %v", i, s.name, w.ns, err)
			}
		}
		if nl.viaNetlink {
			viaNetlink++
		}
		if diff := cmp.Diff(list(nftNS), list(nlNS)); diff != "" {
			t.Fatalf("step %d (%s): netlink wrote another table than nft (-nft +netlink):\n%s", i, s.name, diff)
		}
	}
	if viaNetlink < len(steps)/2 {
		t.Errorf("%d of %d syncs went over netlink, want most", viaNetlink, len(steps))
	}
	t.Logf("%d of %d syncs over netlink", viaNetlink, len(steps))
}
