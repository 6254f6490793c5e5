package kubelet_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"

	"trireme.dev/e2e/internal/browser"
	"trireme.dev/e2e/internal/console"
)

// TestDashboardTerminal runs a shell in a real container from
// trireme-dashboard's pod page in headless Chromium: the page's terminal
// reaches pods/exec as the signed-in user, through the apiserver and this
// suite's kubelet. It lives here rather than in e2e/dashboard because
// this suite is the one with a node (containerd, a kubelet joined by TLS
// bootstrap and the apiserver's kubelet client certificate).
func TestDashboardTerminal(t *testing.T) {
	createPod(t, boundPod("terminal", corev1.Container{Name: "shell", Image: suite.busybox, Command: []string{"sleep", "3600"}}))
	waitPod(t, "terminal", 60*time.Second, "Running", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	token := console.Token(t, suite.client, "default", "terminal-user", "cluster-admin")
	base := console.Start(t, suite.srv.KubeconfigPath())
	tab := browser.New(t)
	ctrl := func(key string) chromedp.Action[chromedp.Void] {
		return chromedp.KeyEvent(key, chromedp.KeyModifiers(chromedp.ModifierCtrl))
	}

	browser.Run(t, tab, "sign in", browser.SignIn(base, token, "system:serviceaccount:default:terminal-user"))
	browser.Run(t, tab, "open the terminal",
		browser.Navigate(base+"/#/obj/api/v1/namespaces/default/pods/terminal"),
		chromedp.WaitVisible(chromedp.CSS("#term-open")),
		chromedp.Click(chromedp.CSS("#term-open")),
		browser.WaitText("#term-state", "Connected"),
	)
	// The shell's output, not the echo of what was typed: $((40+2)) only
	// becomes 42 in the container.
	browser.Run(t, tab, "run a command",
		chromedp.SendKeys(chromedp.CSS("#term-input"), "echo term-$((40+2))\n"),
		browser.WaitText("#terminal", "term-42"),
	)
	browser.Run(t, tab, "output that looks like markup stays text",
		chromedp.SendKeys(chromedp.CSS("#term-input"), "echo '<b>bold</b>'\n"),
		browser.WaitTrue(`document.querySelector('#terminal').innerText.includes('\n<b>bold</b>') && !document.querySelector('#terminal b')`,
			"the terminal never showed <b>bold</b> as text"),
	)
	// Without Ctrl-C reaching the TTY as an interrupt, sleep would hold the
	// shell for five minutes.
	browser.Run(t, tab, "Ctrl-C interrupts",
		chromedp.SendKeys(chromedp.CSS("#term-input"), "echo sleeping-$((2+3)); sleep 300\n"),
		browser.WaitText("#terminal", "sleeping-5"),
		ctrl("c"),
		chromedp.SendKeys(chromedp.CSS("#term-input"), "echo after-$((1+1))\n"),
		browser.WaitText("#terminal", "after-2"),
		browser.Shot(t, "terminal"),
	)
	browser.Run(t, tab, "Ctrl-D ends the shell",
		ctrl("d"),
		browser.WaitText("#term-state", "exit code 0"),
	)
}
