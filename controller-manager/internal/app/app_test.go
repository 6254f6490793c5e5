package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/command"
)

func TestRunRefusesBadInput(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag"},
		{"unknown controller", []string{"--controllers=*,nope", "--secure-port=0"}, `unknown controller "nope"`},
		{"missing config file", []string{"--config=/nonexistent/kcm.yaml"}, "read config"},
		{"missing kubeconfig", []string{"--kubeconfig=/nonexistent/kubeconfig", "--secure-port=0"}, "client configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.args, command.Streams{Out: &bytes.Buffer{}})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"--version"}, command.Streams{Out: &out}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) == "" {
		t.Error("--version printed nothing")
	}
}

func TestFlagsOverrideConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kcm.yaml")
	body := `apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1
kind: KubeControllerManagerConfiguration
Generic:
  Controllers: ["*", "-resourcequota"]
ResourceQuotaController:
  ResourceQuotaSyncPeriod: 1m
  ConcurrentResourceQuotaSyncs: 9
`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", path, "--resource-quota-sync-period=2m"}
	final, err := spec.Resolve(args)
	if err != nil {
		t.Fatal(err)
	}
	rq := final.Config.ResourceQuotaController
	if rq.ResourceQuotaSyncPeriod.Duration != 2*time.Minute {
		t.Errorf("sync period = %v, want the flag's 2m", rq.ResourceQuotaSyncPeriod.Duration)
	}
	if rq.ConcurrentResourceQuotaSyncs != 9 {
		t.Errorf("quota workers = %d, want the file's 9", rq.ConcurrentResourceQuotaSyncs)
	}
	if got := strings.Join(final.Config.Generic.Controllers, ","); got != "*,-resourcequota" {
		t.Errorf("controllers = %s, want the file's", got)
	}
}
