package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

var known = []string{"serviceaccount", "resourcequota"}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	g := cfg.Generic
	checks := []struct {
		name string
		ok   bool
	}{
		{"leader election on", *g.LeaderElection.LeaderElect},
		{"lease kube-system/kube-controller-manager", g.LeaderElection.ResourceNamespace == "kube-system" && g.LeaderElection.ResourceName == "kube-controller-manager"},
		{"lock leases", g.LeaderElection.ResourceLock == "leases"},
		{"lease timings", g.LeaderElection.LeaseDuration.Duration == 15*time.Second && g.LeaderElection.RenewDeadline.Duration == 10*time.Second && g.LeaderElection.RetryPeriod.Duration == 2*time.Second},
		{"controllers star", len(g.Controllers) == 1 && g.Controllers[0] == "*"},
		{"client qps and burst", g.ClientConnection.QPS == 20 && g.ClientConnection.Burst == 30},
		{"quota sync period 5m", cfg.ResourceQuotaController.ResourceQuotaSyncPeriod.Duration == 5*time.Minute},
		{"quota workers 5", cfg.ResourceQuotaController.ConcurrentResourceQuotaSyncs == 5},
		{"service account credentials off", !cfg.KubeCloudShared.UseServiceAccountCredentials},
		{"profiling on, as upstream", *g.Debugging.EnableProfiling},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Errorf("default wrong: %+v", cfg.Generic)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
		check   func(t *testing.T, o *Options)
	}{
		{
			name: "fields given are kept, the rest defaulted",
			body: `apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1
kind: KubeControllerManagerConfiguration
Generic:
  Controllers: ["*", "-resourcequota"]
  LeaderElection:
    leaderElect: false
ResourceQuotaController:
  ResourceQuotaSyncPeriod: 1m
`,
			check: func(t *testing.T, o *Options) {
				g := o.Config.Generic
				if *g.LeaderElection.LeaderElect || g.LeaderElection.ResourceName != "kube-controller-manager" {
					t.Errorf("leader election = %+v", g.LeaderElection)
				}
				if strings.Join(g.Controllers, ",") != "*,-resourcequota" {
					t.Errorf("controllers = %v", g.Controllers)
				}
				if d := o.Config.ResourceQuotaController.ResourceQuotaSyncPeriod.Duration; d != time.Minute {
					t.Errorf("sync period = %v", d)
				}
				if n := o.Config.ResourceQuotaController.ConcurrentResourceQuotaSyncs; n != 5 {
					t.Errorf("quota workers = %d, want default 5", n)
				}
			},
		},
		{
			name:    "unknown field is refused",
			body:    "apiVersion: kubecontrollermanager.config.k8s.io/v1alpha1\nkind: KubeControllerManagerConfiguration\nGenric: {}\n",
			wantErr: "unknown field",
		},
		{
			name:    "other kind is refused",
			body:    "apiVersion: v1\nkind: ConfigMap\n",
			wantErr: "decode config",
		},
		{
			name:    "no kind is refused",
			body:    "Generic: {}\n",
			wantErr: "decode config",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig(writeConfig(t, tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, New(cfg))
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults are valid", nil, ""},
		{"known controllers", []string{"--controllers=*,-resourcequota,serviceaccount"}, ""},
		{"unknown controller", []string{"--controllers=*,nope"}, `unknown controller "nope"`},
		{"unknown disabled controller", []string{"--controllers=-nope"}, `unknown controller "-nope"`},
		{"secure port off", []string{"--secure-port=0"}, ""},
		{"secure port out of range", []string{"--secure-port=70000"}, "--secure-port"},
		{"lease shorter than renew deadline", []string{"--leader-elect-lease-duration=5s"}, "--leader-elect-lease-duration"},
		{"timings ignored without leader election", []string{"--leader-elect=false", "--leader-elect-lease-duration=5s"}, ""},
		{"endpoints lock", []string{"--leader-elect-resource-lock=endpoints"}, "only leases"},
		{"bad log format", []string{"--log-format=xml"}, "--log-format"},
		{"zero quota sync period", []string{"--resource-quota-sync-period=0"}, "--resource-quota-sync-period"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := New(nil)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs, known)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			errs := o.Validate(known)
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			joined := strings.Join(all, "; ")
			if tt.wantErr == "" && len(errs) > 0 {
				t.Fatalf("unexpected errors: %s", joined)
			}
			if tt.wantErr != "" && !strings.Contains(joined, tt.wantErr) {
				t.Fatalf("errors %q, want %q", joined, tt.wantErr)
			}
		})
	}
}

func TestDelegatedAuthFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(o *Options) bool
	}{
		{"health paths always allowed by default", nil, func(o *Options) bool {
			return strings.Join(o.Authorization.AlwaysAllowPaths, ",") == "/healthz,/readyz,/livez"
		}},
		{"kubeconfigs optional by default", nil, func(o *Options) bool {
			return o.Authentication.RemoteKubeConfigFileOptional && o.Authorization.RemoteKubeConfigFileOptional &&
				o.Authentication.RemoteKubeConfigFile == "" && o.Authorization.RemoteKubeConfigFile == ""
		}},
		{"kubeconfigs", []string{"--authentication-kubeconfig=/etc/cm.conf", "--authorization-kubeconfig=/etc/cm.conf"}, func(o *Options) bool {
			return o.Authentication.RemoteKubeConfigFile == "/etc/cm.conf" && o.Authorization.RemoteKubeConfigFile == "/etc/cm.conf"
		}},
		{"always allowed paths", []string{"--authorization-always-allow-paths=/healthz,/metrics"}, func(o *Options) bool {
			return strings.Join(o.Authorization.AlwaysAllowPaths, ",") == "/healthz,/metrics"
		}},
		{"skip lookup and client CA", []string{"--authentication-skip-lookup", "--client-ca-file=/etc/ca.crt"}, func(o *Options) bool {
			return o.Authentication.SkipInClusterLookup && o.Authentication.ClientCert.ClientCA == "/etc/ca.crt"
		}},
		{"profiling off", []string{"--profiling=false"}, func(o *Options) bool {
			return !*o.Config.Generic.Debugging.EnableProfiling
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := New(nil)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs, known)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if errs := o.Validate(known); len(errs) > 0 {
				t.Fatalf("Validate: %v", errs)
			}
			if !tt.check(o) {
				t.Errorf("after %v: authentication %+v, authorization %+v", tt.args, o.Authentication, o.Authorization)
			}
		})
	}
}
