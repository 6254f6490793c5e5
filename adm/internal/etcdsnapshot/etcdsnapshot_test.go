package etcdsnapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const manifest = `apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system}
spec:
  containers:
  - name: etcd
    image: trireme.dev/etcd:v1
    command:
    - etcd
    - --name=node-a
    - --data-dir=/r/var/lib/etcd
    - --initial-advertise-peer-urls=https://10.0.0.1:2380
    - --initial-cluster=node-a=https://10.0.0.1:2380
    - --listen-client-urls=https://127.0.0.1:2379,https://10.0.0.1:2379
    - --trusted-ca-file=/r/etc/trireme/pki/etcd/ca.crt
`

func TestLocalMember(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(string) string
		want    Member
		wantErr string
	}{
		{name: "kubeadm-style manifest", edit: func(s string) string { return s }, want: Member{
			Name: "node-a", DataDir: "/r/var/lib/etcd", PeerURL: "https://10.0.0.1:2380",
			InitialCluster: "node-a=https://10.0.0.1:2380", Endpoint: "https://127.0.0.1:2379",
			CAFile: "/r/etc/trireme/pki/etcd/ca.crt", CertFile: "/r/etc/trireme/pki/etcd/healthcheck-client.crt",
			KeyFile: "/r/etc/trireme/pki/etcd/healthcheck-client.key",
		}},
		{name: "no data dir", edit: func(s string) string { return strings.Replace(s, "    - --data-dir=/r/var/lib/etcd\n", "", 1) },
			wantErr: "etcd has no --data-dir"},
		{name: "not on loopback", edit: func(s string) string { return strings.Replace(s, "https://127.0.0.1:2379,", "", 1) },
			wantErr: "does not listen on 127.0.0.1"},
		{name: "no manifest", edit: nil, wantErr: "is this a control-plane node with local etcd?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.edit != nil {
				if err := os.WriteFile(filepath.Join(dir, "etcd.yaml"), []byte(tt.edit(manifest)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LocalMember(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("LocalMember = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSaveRefusesAnExistingFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(file, []byte("old backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(t.Context(), Member{Endpoint: "https://127.0.0.1:1"}, file); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("Save over a file: err = %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != "old backup" {
		t.Errorf("the existing file changed: %q", data)
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(file, []byte("not a bolt database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil {
		t.Fatal("Read of a non-snapshot succeeded")
	}
}

// TestRestoreIntoRefuses: a member's data directory that holds data is
// refused, and a snapshot failing its hash check leaves the directory as
// it was (empty, no staging directory left).
func TestRestoreIntoRefuses(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(garbage, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	m := Member{Name: "cp-1", PeerURL: "https://10.0.0.1:2380", InitialCluster: "cp-1=https://10.0.0.1:2380"}
	for _, tc := range []struct {
		name, want string
		before     []string
	}{
		{name: "data already there", before: []string{"member"}, want: "is not empty"},
		{name: "a snapshot failing its hash", want: "refusing to restore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "etcd")
			for _, f := range tc.before {
				if err := os.MkdirAll(filepath.Join(dir, f), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			err := RestoreInto(garbage, dir, m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RestoreInto = %v, want %q", err, tc.want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(tc.before) {
				t.Errorf("%s holds %d entries after the refusal, want %d", dir, len(entries), len(tc.before))
			}
		})
	}
}
