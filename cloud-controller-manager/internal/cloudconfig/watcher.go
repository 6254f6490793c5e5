package cloudconfig

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"

	api "trireme.dev/api/config/cloudconfig"
)

// DefaultReloadInterval is how often a Watcher looks at its file.
const DefaultReloadInterval = 2 * time.Second

// Watcher holds the configuration last read from a file. The zero path
// means no file: an empty configuration that never changes.
type Watcher struct {
	path     string
	interval time.Duration

	mu       sync.Mutex
	cfg      *api.CloudConfiguration
	raw      []byte
	onChange []func(*api.CloudConfiguration)
}

// Load reads the file at path; a missing or invalid file is an error, so
// that a component stops at start rather than run without its inventory.
func Load(path string) (*Watcher, error) {
	if path == "" {
		return Static(nil), nil
	}
	w := &Watcher{path: path, interval: DefaultReloadInterval}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cloud config: %w", err)
	}
	cfg, err := Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	w.cfg, w.raw = cfg, raw
	return w, nil
}

// Current returns the configuration in force; callers must not modify it.
func (w *Watcher) Current() *api.CloudConfiguration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cfg
}

// OnChange registers f to be called, from Run's goroutine, with every new
// configuration.
func (w *Watcher) OnChange(f func(*api.CloudConfiguration)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onChange = append(w.onChange, f)
}

// Run re-reads the file every interval until ctx ends. Polling rather
// than inotify: a ConfigMap volume swaps a symlink, and an editor may
// replace the file, both of which lose a watch on the old inode.
func (w *Watcher) Run(ctx context.Context, log logr.Logger) {
	if w.path == "" {
		return
	}
	wait.UntilWithContext(ctx, func(context.Context) {
		if err := w.Reload(); err != nil {
			log.Error(err, "Keeping the last good cloud config", "path", w.path)
		}
	}, w.interval)
}

// Reload reads the file again; a configuration that changed replaces the
// current one and is handed to the OnChange functions. A file that
// cannot be read or is invalid changes nothing and is reported.
func (w *Watcher) Reload() error {
	raw, err := os.ReadFile(w.path)
	if err != nil {
		return fmt.Errorf("read cloud config: %w", err)
	}
	w.mu.Lock()
	same := bytes.Equal(raw, w.raw)
	w.mu.Unlock()
	if same {
		return nil
	}
	cfg, err := Decode(raw)
	if err != nil {
		// Remember the bad bytes so that one bad save is reported once.
		w.mu.Lock()
		w.raw = raw
		w.mu.Unlock()
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.mu.Lock()
	w.cfg, w.raw = cfg, raw
	fs := append([]func(*api.CloudConfiguration){}, w.onChange...)
	w.mu.Unlock()
	for _, f := range fs {
		f(cfg)
	}
	return nil
}
