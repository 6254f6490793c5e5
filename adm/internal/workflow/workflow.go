// Package workflow runs triremeadm's commands as ordered, named phases (after kind's
// actions and kubeadm's phases): each phase prints one status line — a spinner that
// becomes a tick or a cross on a terminal, plain "[name] ... ok" lines otherwise — and
// any phase can be run alone or skipped by name.
package workflow

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Phase is one named step of a workflow.
type Phase struct {
	// Name is what users type: `triremeadm init phase <Name>`, --skip-phases=<Name>.
	Name string
	// Short says what the phase does, shown in help and in the status line.
	Short string
	// Run does the phase's work. It returns nil only when the work is done; a phase
	// that cannot do its work returns an error saying why, never nil. It may print
	// details with Printf on the Status it is given (shown under its status line).
	Run func(ctx context.Context, s *Status) error
}

// Runner runs phases in order, printing a status line for each.
type Runner struct {
	// Out receives the status lines.
	Out io.Writer
	// TTY selects the spinner; otherwise plain lines.
	TTY bool
}

// NewRunner returns a runner writing to out, with a spinner when out is a terminal.
func NewRunner(out io.Writer) *Runner {
	return &Runner{Out: out, TTY: isTerminal(out)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Validate checks that every name in skip is a phase of phases.
func Validate(phases []Phase, skip []string) error {
	for _, s := range skip {
		if s == "" {
			continue
		}
		if !slices.ContainsFunc(phases, func(p Phase) bool { return p.Name == s }) {
			return fmt.Errorf("unknown phase %q; phases are: %s", s, strings.Join(Names(phases), ", "))
		}
	}
	return nil
}

// Names lists the phases' names in order.
func Names(phases []Phase) []string {
	out := make([]string, len(phases))
	for i, p := range phases {
		out[i] = p.Name
	}
	return out
}

// Run runs phases in order, leaving out those named in skip, and stops at the first
// error, which it returns wrapped with the phase's name.
func (r *Runner) Run(ctx context.Context, phases []Phase, skip []string) error {
	if err := Validate(phases, skip); err != nil {
		return err
	}
	for _, p := range phases {
		if slices.Contains(skip, p.Name) {
			fmt.Fprintf(r.Out, "[%s] skipped\n", p.Name)
			continue
		}
		if err := r.RunOne(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// RunOne runs a single phase with its status line.
func (r *Runner) RunOne(ctx context.Context, p Phase) error {
	s := &Status{r: r, name: p.Name, short: p.Short}
	s.start()
	start := time.Now()
	err := p.Run(ctx, s)
	s.finish(err, time.Since(start))
	if err != nil {
		return &PhaseError{Phase: p.Name, Err: err}
	}
	return nil
}

// PhaseError is a phase's failure.
type PhaseError struct {
	// Phase is the failed phase's name.
	Phase string
	// Err is what went wrong.
	Err error
}

func (e *PhaseError) Error() string { return fmt.Sprintf("phase %s: %v", e.Phase, e.Err) }

func (e *PhaseError) Unwrap() error { return e.Err }

// Status is a running phase's status line.
type Status struct {
	r     *Runner
	name  string
	short string

	mu       sync.Mutex
	details  []string
	progress string
	stop     chan struct{}
	stopped  chan struct{}
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (s *Status) start() {
	if !s.r.TTY {
		return
	}
	s.stop = make(chan struct{})
	s.stopped = make(chan struct{})
	go func() {
		defer close(s.stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			s.mu.Lock()
			line := s.short
			if s.progress != "" {
				line += " — " + s.progress
			}
			fmt.Fprintf(s.r.Out, "\r\x1b[K %s %s", spinnerFrames[i%len(spinnerFrames)], line)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// Printf records a detail line printed under the phase's status line.
func (s *Status) Printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.details = append(s.details, fmt.Sprintf(format, args...))
}

// Progress shows what a long phase is waiting for: next to the spinner on a
// terminal; otherwise as a detail line when it changes.
func (s *Status) Progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg == s.progress {
		return
	}
	s.progress = msg
	if !s.r.TTY {
		fmt.Fprintf(s.r.Out, "[%s] %s\n", s.name, msg)
	}
}

func (s *Status) finish(err error, took time.Duration) {
	if s.stop != nil {
		close(s.stop)
		<-s.stopped
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	secs := took.Round(10 * time.Millisecond)
	if s.r.TTY {
		mark := "✓"
		if err != nil {
			mark = "✗"
		}
		fmt.Fprintf(s.r.Out, "\r\x1b[K %s %s (%s)\n", mark, s.short, secs)
	} else {
		result := "ok"
		if err != nil {
			result = "failed"
		}
		fmt.Fprintf(s.r.Out, "[%s] %s ... %s (%s)\n", s.name, s.short, result, secs)
	}
	for _, d := range s.details {
		fmt.Fprintf(s.r.Out, "    %s\n", d)
	}
}
