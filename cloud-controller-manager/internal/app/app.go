// Package app is trireme-cloud-controller-manager's command line:
// k8s.io/cloud-provider's cloud-controller-manager command with its
// default controllers (cloud-node, cloud-node-lifecycle, service; route
// off, as the provider has no Routes), over the "trireme" provider.
package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	cloudprovider "k8s.io/cloud-provider"
	ccmapp "k8s.io/cloud-provider/app"
	ccmconfig "k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"

	// The JSON log format and client-go's metrics, as upstream's
	// cloud-controller-manager registers them.
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"

	"trireme.dev/cloud-controller-manager/internal/cloudconfig"
	"trireme.dev/cloud-controller-manager/internal/provider"
	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/memtrim"
)

// Name is the binary's name.
const Name = "trireme-cloud-controller-manager"

// flagDefaults are the upstream flags whose default differs here.
var flagDefaults = map[string]string{
	"cloud-provider": provider.Name,
	// The provider has no Routes: flannel owns pod routes.
	"configure-cloud-routes": "false",
}

// Run parses args and runs the cloud-controller-manager until ctx ends.
// The --cloud-config file is read before anything starts, so that a
// malformed one stops the command with an error naming its line.
func Run(ctx context.Context, args []string, streams command.Streams) error {
	provider.Register()
	opts, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		return fmt.Errorf("cloud-controller-manager options: %w", err)
	}
	var cloud *provider.Cloud
	initCloud := func(*ccmconfig.CompletedConfig) cloudprovider.Interface { return cloud }
	cmd := ccmapp.NewCloudControllerManagerCommand(opts, initCloud, ccmapp.DefaultInitFuncConstructors,
		names.CCMControllerAliases(), cliflag.NamedFlagSets{}, ctx.Done())
	cmd.Use = Name
	for name, v := range flagDefaults {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			return fmt.Errorf("upstream flag --%s is gone", name)
		}
		if err := f.Value.Set(v); err != nil {
			return fmt.Errorf("default of --%s: %w", name, err)
		}
		f.DefValue = v
	}
	upstream := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		cp := opts.KubeCloudShared.CloudProvider
		if cp.Name != provider.Name {
			return fmt.Errorf("--cloud-provider=%q: this binary has only %q", cp.Name, provider.Name)
		}
		w, err := cloudconfig.Load(cp.CloudConfigFile)
		if err != nil {
			return err
		}
		cloud = provider.New(w)
		go w.Run(ctx, klog.Background().WithName("cloud-config"))
		// Start-up runs the init code of every API group once; give those
		// pages of the executable, and freed heap, back while idle.
		go memtrim.RunIdleTrimmer(ctx, klog.Background().WithName("memtrim"), memtrim.IdleInterval, memtrim.IdleAllocations)
		return upstream(c, args)
	}
	return command.Execute(ctx, cmd, args, streams)
}
