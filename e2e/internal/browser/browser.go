// Package browser drives trireme-dashboard's page in a real headless
// Chromium (Debian's chromium package) for the suites that test it.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// New starts a fresh headless Chromium (its own profile, nothing that
// reaches the network on its own) and returns a tab context; the browser
// is stopped when the test ends.
func New(t testing.TB) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (hack/install-deps.sh installs it): %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Run performs actions in tab within a minute, failing the test with what
// on error.
func Run(t testing.TB, tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// WaitText waits until the element sel's text contains want.
func WaitText(sel, want string) chromedp.Action[chromedp.Void] {
	return WaitTrue(fmt.Sprintf(`(document.querySelector(%q)?.innerText || "").includes(%q)`, sel, want), fmt.Sprintf("%s never showed %q", sel, want))
}

// WaitTrue waits until the JavaScript expression expr is true; failing,
// it reports what and the page's text.
func WaitTrue(expr, what string) chromedp.Action[chromedp.Void] {
	return waitTrue(expr, what, 20*time.Second)
}

func waitTrue(expr, what string, timeout time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		// Evaluate in a loop rather than Poll: a navigation (sign-in reloads
		// the page) destroys the execution context a Poll runs in.
		deadline := time.Now().Add(timeout)
		for {
			ok, err := chromedp.Evaluate[bool](expr)(ctx, target)
			if err == nil && ok {
				return nil
			}
			if time.Now().After(deadline) {
				text, _ := chromedp.Evaluate[string](`document.body.innerText`)(ctx, target)
				return fmt.Errorf("%s (last error %v); page text:\n%s", what, err, text)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

// SignIn loads the page at base and signs in with token, waiting until
// the header names user.
func SignIn(base, token, user string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		signInForm(base),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)),
		WaitText("#who", user),
	)
}

// signInForm loads the page until its sign-in form shows: a load that
// Chromium abandoned half-way because the host's interfaces changed (a
// pod's veth getting its address) leaves a page whose script never ran.
func signInForm(base string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		var err error
		for range 3 {
			if _, err = Navigate(base+"/")(ctx, target); err != nil {
				continue
			}
			if _, err = waitTrue(`!!document.querySelector('#signin') && !document.querySelector('#signin').hidden`, "the sign-in form never showed", 10*time.Second)(ctx, target); err == nil {
				return nil
			}
		}
		return err
	})
}

// Eval runs the JavaScript expression expr for its effect; its value is
// dropped, not serialized.
func Eval(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := chromedp.Evaluate[any]("void ("+expr+")")(ctx, target)
		return err
	})
}

// Navigate loads url, again when Chromium abandons the load because the
// host's interfaces changed: suites that start pods add veths and bridges
// meanwhile.
func Navigate(url string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		for range 5 {
			_, err := chromedp.Navigate(url)(ctx, target)
			if err == nil || !strings.Contains(err.Error(), "ERR_NETWORK_CHANGED") {
				return err
			}
		}
		_, err := chromedp.Navigate(url)(ctx, target)
		return err
	})
}

// Into runs a and stores its result in dst.
func Into[T any](a chromedp.Action[T], dst *T) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		v, err := a(ctx, target)
		*dst = v
		return err
	})
}

// Shot saves a screenshot of the page under the test's artifact dir.
func Shot(t testing.TB, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, target)
		if err != nil {
			return fmt.Errorf("screenshot %s: %w", name, err)
		}
		p := filepath.Join(t.ArtifactDir(), name+".png")
		if err := os.WriteFile(p, png, 0o644); err != nil {
			return fmt.Errorf("write screenshot: %w", err)
		}
		t.Logf("screenshot %s", p)
		return nil
	})
}
