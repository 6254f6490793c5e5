package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestServiceAndClusterFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(o *Options) bool
		wantErr string
	}{
		{"upstream defaults", nil, func(o *Options) bool {
			c := o.Config
			return c.EndpointSliceController.ConcurrentServiceEndpointSyncs == 5 && c.EndpointSliceController.MaxEndpointsPerSlice == 100 &&
				c.EndpointController.ConcurrentEndpointSyncs == 5 && c.EndpointSliceMirroringController.MirroringMaxEndpointsPerSubset == 1000 &&
				c.NamespaceController.ConcurrentNamespaceSyncs == 10 && *c.GarbageCollectorController.EnableGarbageCollector &&
				c.GarbageCollectorController.ConcurrentGCSyncs == 20 && c.PodGCController.TerminatedPodGCThreshold == 12500
		}, ""},
		{"flags set fields", []string{"--concurrent-gc-syncs=3", "--terminated-pod-gc-threshold=10", "--enable-garbage-collector=false", "--max-endpoints-per-slice=50"}, func(o *Options) bool {
			c := o.Config
			return c.GarbageCollectorController.ConcurrentGCSyncs == 3 && c.PodGCController.TerminatedPodGCThreshold == 10 &&
				!*c.GarbageCollectorController.EnableGarbageCollector && c.EndpointSliceController.MaxEndpointsPerSlice == 50
		}, ""},
		{"slice size over 1000 refused", []string{"--max-endpoints-per-slice=1001"}, nil, "--max-endpoints-per-slice"},
		{"negative threshold refused", []string{"--terminated-pod-gc-threshold=-1"}, nil, "--terminated-pod-gc-threshold"},
		{"zero workers refused", []string{"--concurrent-namespace-syncs=0"}, nil, "--concurrent-namespace-syncs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := New(nil)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs, nil)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			errs := validateServiceAndCluster(o.Config)
			if tt.wantErr == "" {
				if len(errs) > 0 {
					t.Fatalf("errors: %v", errs)
				}
				if !tt.check(o) {
					t.Errorf("configuration not as expected: %+v", o.Config)
				}
				return
			}
			found := false
			for _, err := range errs {
				found = found || strings.Contains(err.Error(), tt.wantErr)
			}
			if !found {
				t.Errorf("errors %v do not name %s", errs, tt.wantErr)
			}
		})
	}
}
