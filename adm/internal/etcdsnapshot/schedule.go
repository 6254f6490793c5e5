package etcdsnapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Scheduled snapshots are named etcd-snapshot-<node>-<time>.db, the time in
// UTC to the second, so that names sort by time for one node and say where
// each was taken.
const (
	namePrefix = "etcd-snapshot-"
	nameSuffix = ".db"
	timeLayout = "20060102T150405Z"
)

// Name is the file name of node's snapshot taken at t.
func Name(node string, t time.Time) string {
	return namePrefix + node + "-" + t.UTC().Format(timeLayout) + nameSuffix
}

// Entry is a scheduled snapshot in a directory.
type Entry struct {
	// Path is the file, Node the node that took it, Taken when.
	Path  string
	Node  string
	Taken time.Time
	// Bytes is the file's size.
	Bytes int64
}

// List returns the scheduled snapshots in dir, oldest first; other files are
// left out, and a missing dir holds none.
func List(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		node, taken, ok := parseName(de.Name())
		if !ok || de.IsDir() {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue
		}
		out = append(out, Entry{Path: filepath.Join(dir, de.Name()), Node: node, Taken: taken, Bytes: info.Size()})
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return a.Taken.Compare(b.Taken) })
	return out, nil
}

// parseName splits a scheduled snapshot's file name; node names may hold
// dashes, the time never does.
func parseName(name string) (string, time.Time, bool) {
	if !strings.HasPrefix(name, namePrefix) || !strings.HasSuffix(name, nameSuffix) {
		return "", time.Time{}, false
	}
	rest := strings.TrimSuffix(strings.TrimPrefix(name, namePrefix), nameSuffix)
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", time.Time{}, false
	}
	t, err := time.Parse(timeLayout, rest[i+1:])
	if err != nil {
		return "", time.Time{}, false
	}
	return rest[:i], t, true
}

// Schedule snapshots the local member every Interval into Dir and keeps the
// newest Retention of Node's.
type Schedule struct {
	Member    Member
	Dir, Node string
	Interval  time.Duration
	Retention int
	// Save takes one snapshot; Save (the package's) unless a test sets it.
	Save func(ctx context.Context, m Member, file string) (Status, error)
	// Now is the clock; time.Now unless a test sets it.
	Now func() time.Time
}

// retryAfter is the wait after a failed snapshot (etcd restarting, say)
// when the interval is longer.
const retryAfter = time.Minute

// Run takes a snapshot whenever the newest of this node's is an Interval
// old (at once when there is none, so that a restart does not postpone the
// next one by a whole interval), until ctx ends. A failed snapshot is logged
// and retried.
func (s Schedule) Run(ctx context.Context, log logr.Logger) error {
	if s.Save == nil {
		s.Save = Save
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("snapshot directory: %w", err)
	}
	for {
		wait, err := s.Due()
		if err != nil {
			return err
		}
		if wait > 0 {
			log.V(2).Info("Waiting for the next snapshot", "in", wait)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
		path, st, err := s.Once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			log.Error(err, "Snapshot failed", "retryIn", min(retryAfter, s.Interval))
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(min(retryAfter, s.Interval)):
			}
			continue
		}
		log.Info("Saved snapshot", "file", path, "revision", st.Revision, "keys", st.Keys, "bytes", st.Bytes, "hash", fmt.Sprintf("%08x", st.Hash))
	}
}

// Due returns how long until the next snapshot: 0 when one is due.
func (s Schedule) Due() (time.Duration, error) {
	entries, err := s.own()
	if err != nil {
		return 0, err
	}
	if len(entries) == 0 {
		return 0, nil
	}
	next := entries[len(entries)-1].Taken.Add(s.Interval)
	return max(0, next.Sub(s.Now())), nil
}

// Once takes one snapshot (Save checks it against the server's hash) and
// removes this node's oldest beyond Retention.
func (s Schedule) Once(ctx context.Context) (string, Status, error) {
	path := filepath.Join(s.Dir, Name(s.Node, s.Now()))
	st, err := s.Save(ctx, s.Member, path)
	if err != nil {
		return "", Status{}, err
	}
	entries, err := s.own()
	if err != nil {
		return path, st, err
	}
	var errs []error
	for len(entries) > s.Retention {
		if err := os.Remove(entries[0].Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		entries = entries[1:]
	}
	return path, st, errors.Join(errs...)
}

// own lists this node's scheduled snapshots: another node's, in a shared
// directory, count against its own retention.
func (s Schedule) own() ([]Entry, error) {
	all, err := List(s.Dir)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(e Entry) bool { return e.Node != s.Node }), nil
}

// Verify checks the sha256 that a snapshot saved through etcd's API ends
// with (the server's hash of what it sent) against the file's contents: a
// truncated or altered file fails, before a restore changes anything.
func Verify(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	// The database is a whole number of 512-byte pages, and the hash follows.
	size := info.Size()
	if size%512 != sha256.Size {
		return fmt.Errorf("snapshot %s is corrupt or truncated: %d bytes is not a database followed by its sha256", file, size)
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, size-sha256.Size); err != nil {
		return fmt.Errorf("read snapshot %s: %w", file, err)
	}
	want := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, want); err != nil {
		return fmt.Errorf("read snapshot %s: %w", file, err)
	}
	if got := h.Sum(nil); string(got) != string(want) {
		return fmt.Errorf("snapshot %s is corrupt: its contents hash to %x, the server's hash it carries is %x", file, got, want)
	}
	return nil
}
