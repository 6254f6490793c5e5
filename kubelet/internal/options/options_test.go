package options

import (
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

func TestParseTaints(t *testing.T) {
	tests := []struct {
		in      string
		want    corev1.Taint
		wantErr bool
	}{
		{in: "dedicated=infra:NoSchedule", want: corev1.Taint{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}},
		{in: "node-role.kubernetes.io/control-plane:NoSchedule", want: corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}},
		{in: "k=v", wantErr: true},
		{in: "k=v:Sometimes", wantErr: true},
		{in: "=v:NoExecute", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTaints([]string{tc.in})
			if tc.wantErr != (err != nil) {
				t.Fatalf("err %v", err)
			}
			if err == nil && got[0] != tc.want {
				t.Errorf("got %+v, want %+v", got[0], tc.want)
			}
		})
	}
}

func TestFlagsWinOverDefaults(t *testing.T) {
	o := New()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--kubeconfig=/k", "--max-pods=7", "--fail-cgroupv1=false", "--hostname-override=Node-A", "--register-with-taints=a=b:NoSchedule"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	c := o.Config
	if c.MaxPods != 7 || *c.FailCgroupV1 || o.HostnameOverride != "node-a" || len(c.RegisterWithTaints) != 1 {
		t.Errorf("maxPods %d failCgroupV1 %v name %s taints %v", c.MaxPods, *c.FailCgroupV1, o.HostnameOverride, c.RegisterWithTaints)
	}
	if c.Port != 10250 {
		t.Errorf("unset flag changed the default port: %d", c.Port)
	}
}

func TestMissingKubeconfig(t *testing.T) {
	o := New()
	o.AddFlags(pflag.NewFlagSet("t", pflag.ContinueOnError))
	if err := o.Complete(); err == nil {
		t.Error("no --kubeconfig accepted")
	}
}

func TestCloudProvider(t *testing.T) {
	for _, tc := range []struct {
		value   string
		wantErr bool
	}{{value: ""}, {value: "external"}, {value: "aws", wantErr: true}} {
		t.Run(tc.value, func(t *testing.T) {
			o := New()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse([]string{"--kubeconfig=/k", "--hostname-override=n", "--cloud-provider=" + tc.value}); err != nil {
				t.Fatal(err)
			}
			if err := o.Complete(); (err != nil) != tc.wantErr {
				t.Fatalf("Complete() = %v, want an error: %v", err, tc.wantErr)
			}
		})
	}
}
