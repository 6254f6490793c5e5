package etcdsnapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// fakeSnapshot writes what etcd's snapshot API yields: whole pages, then
// their sha256.
func fakeSnapshot(t *testing.T, path string) {
	t.Helper()
	db := make([]byte, 4096)
	copy(db, "bbolt-ish")
	sum := sha256.Sum256(db)
	if err := os.WriteFile(path, append(db, sum[:]...), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestNames(t *testing.T) {
	at := time.Date(2026, 12, 2, 13, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		file string
		node string
		ok   bool
	}{
		{Name("cp-1", at), "cp-1", true},
		{Name("cp-a-b", at.In(time.FixedZone("x", 3600))), "cp-a-b", true},
		{"etcd-snapshot-cp-1-20261202T130405Z.db.part", "", false},
		{"etcd-snapshot-20261202T130405Z.db", "", false},
		{"etcd-snapshot-cp-1-yesterday.db", "", false},
		{"backup.db", "", false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			node, taken, ok := parseName(tc.file)
			if ok != tc.ok || node != tc.node || (ok && !taken.Equal(at)) {
				t.Errorf("parseName = %q %s %v, want %q %s %v", node, taken, ok, tc.node, at, tc.ok)
			}
		})
	}
}

func TestSchedule(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	saves := 0
	s := Schedule{Dir: dir, Node: "cp-1", Interval: 12 * time.Hour, Retention: 3,
		Now: func() time.Time { return now },
		Save: func(_ context.Context, _ Member, file string) (Status, error) {
			saves++
			fakeSnapshot(t, file)
			return Status{Revision: int64(saves)}, nil
		}}
	// Another node's snapshots in the same directory are not this node's to prune.
	fakeSnapshot(t, filepath.Join(dir, Name("cp-2", now.Add(-100*time.Hour))))
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600)

	for i, tc := range []struct {
		advance time.Duration
		due     time.Duration
	}{
		{0, 0},                                   // none yet: at once
		{time.Hour, 11 * time.Hour},              // one taken an hour ago
		{11 * time.Hour, 0},                      // an interval later
		{12 * time.Hour, 0}, {12 * time.Hour, 0}, // past retention
		{13 * time.Hour, 0}, // late (the pod was down): at once
		{30 * time.Minute, 11*time.Hour + 30*time.Minute},
	} {
		now = now.Add(tc.advance)
		due, err := s.Due()
		if err != nil || due != tc.due {
			t.Fatalf("step %d: Due = %s, %v; want %s", i, due, err, tc.due)
		}
		if due == 0 {
			if _, _, err := s.Once(context.Background()); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
	}
	all, _ := List(dir)
	var names []string
	for _, e := range all {
		names = append(names, filepath.Base(e.Path))
		if err := Verify(e.Path); err != nil {
			t.Error(err)
		}
	}
	want := []string{"etcd-snapshot-cp-2-20261127T200000Z.db", "etcd-snapshot-cp-1-20261203T000000Z.db",
		"etcd-snapshot-cp-1-20261203T120000Z.db", "etcd-snapshot-cp-1-20261204T010000Z.db"}
	if saves != 5 || !slices.Equal(names, want) {
		t.Errorf("%d saves, snapshots %v; want 5 and %v", saves, names, want)
	}
}

func TestScheduleRunRetriesAFailure(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	s := Schedule{Dir: dir, Node: "cp-1", Interval: 50 * time.Millisecond, Retention: 1,
		Save: func(_ context.Context, _ Member, file string) (Status, error) {
			calls++
			if calls == 1 {
				return Status{}, errors.New("etcd is restarting")
			}
			fakeSnapshot(t, file)
			cancel()
			return Status{}, nil
		}}
	if err := s.Run(ctx, testLogger(t)); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("%d snapshots tried, want the failed one and its retry", calls)
	}
}

func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(b []byte) []byte
		err   string
	}{
		{"intact", func(b []byte) []byte { return b }, ""},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1000] }, "corrupt or truncated"},
		{"hash cut off", func(b []byte) []byte { return b[:4096] }, "corrupt or truncated"},
		{"a byte changed", func(b []byte) []byte { b[100] ^= 1; return b }, "its contents hash to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			fakeSnapshot(t, path)
			b, _ := os.ReadFile(path)
			os.WriteFile(path, tc.spoil(b), 0o600)
			err := Verify(path)
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Verify = %v, want %q", err, tc.err)
			}
			if tc.err == "" {
				return
			}
			// Restore refuses it before creating anything.
			dataDir := filepath.Join(t.TempDir(), "restored")
			if err := Restore(path, dataDir, Member{Name: "cp-1", PeerURL: "https://10.0.0.1:2380", InitialCluster: "cp-1=https://10.0.0.1:2380"}); err == nil || !strings.Contains(err.Error(), "refusing to restore") {
				t.Errorf("Restore = %v", err)
			}
			if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Restore created %s: %v", dataDir, err)
			}
		})
	}
}

func testLogger(t *testing.T) logr.Logger {
	return funcr.New(func(prefix, args string) { t.Log(prefix, args) }, funcr.Options{})
}
