// Package conntrack deletes stale conntrack entries with the conntrack
// binary (conntrack-tools): without it a UDP "connection" keeps going to
// a removed endpoint, or keeps being refused after a Service got
// endpoints, for as long as the client keeps sending; and a TCP client
// that reuses a port whose entry to a gone pod was left closing sends its
// SYN to the dead address (model.Changes.Stale).
package conntrack

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"trireme.dev/proxy/internal/model"
)

// Runner runs a conntrack command; tests substitute a recorder.
type Runner func(ctx context.Context, args ...string) error

// Exec runs the conntrack binary. Its exit status 1 with "0 flow entries"
// means there was nothing to delete, which is not an error.
func Exec(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "conntrack", args...).CombinedOutput()
	if err != nil && strings.Contains(string(out), "0 flow entries") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("conntrack %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Args returns the conntrack arguments that delete f's entries.
func Args(f model.StaleFlow) []string {
	args := []string{"-D", "-p", strings.ToLower(string(f.Protocol))}
	if f.ServiceIP.Is6() || f.Endpoint.Is6() {
		// conntrack lists IPv4 only unless told otherwise; a NodePort flow
		// carries its Service's ClusterIP for the family.
		args = append(args, "-f", "ipv6")
	}
	if f.NodePort != 0 {
		args = append(args, "--orig-port-dst", strconv.Itoa(int(f.NodePort)))
	} else {
		args = append(args, "--orig-dst", f.ServiceIP.String(), "--orig-port-dst", strconv.Itoa(int(f.Port)))
	}
	if f.Endpoint.IsValid() {
		args = append(args, "--dst-nat", f.Endpoint.String())
	}
	return args
}

// Clear deletes the entries of every flow, going on past failures.
func Clear(ctx context.Context, run Runner, flows []model.StaleFlow) error {
	var errs []error
	for _, f := range flows {
		if err := run(ctx, Args(f)...); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
