package iptables

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Executor runs the iptables tools; tests substitute a recorder.
type Executor interface {
	// Restore feeds data to iptables-restore --noflush.
	Restore(ctx context.Context, data []byte) error
	// Save returns iptables-save's output for table; it may leave out
	// everything but the table and chain declarations.
	Save(ctx context.Context, table string) ([]byte, error)
	// Run runs iptables with args (-w is added).
	Run(ctx context.Context, args ...string) error
}

// Commands is the Executor of the real binaries, for one IP family.
type Commands struct {
	// IPv6 selects ip6tables.
	IPv6 bool
}

func (c Commands) bin(name string) string {
	if c.IPv6 {
		return strings.Replace(name, "iptables", "ip6tables", 1)
	}
	return name
}

// Restore implements Executor.
func (c Commands) Restore(ctx context.Context, data []byte) error {
	cmd := exec.CommandContext(ctx, c.bin("iptables-restore"), "-w", "5", "--noflush")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", cmd, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Save implements Executor. It reads iptables-save's output as it comes
// and keeps only the declarations: at 10,000 Services the rules are tens
// of megabytes that nothing here needs.
func (c Commands) Save(ctx context.Context, table string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.bin("iptables-save"), "-t", table)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if l := sc.Bytes(); len(l) > 0 && (l[0] == '*' || l[0] == ':') {
			out.Write(l)
			out.WriteByte('\n')
		}
	}
	scanErr := sc.Err()
	_, _ = io.Copy(io.Discard, stdout) // the rest, if the scan stopped early
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", cmd, err, strings.TrimSpace(stderr.String()))
	}
	if scanErr != nil {
		return nil, fmt.Errorf("%s: read: %w", cmd, scanErr)
	}
	return out.Bytes(), nil
}

// Run implements Executor.
func (c Commands) Run(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, c.bin("iptables"), append([]string{"-w", "5"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", cmd, err, strings.TrimSpace(string(out)))
	}
	return nil
}
