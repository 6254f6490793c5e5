// Command metrics-server is upstream's metrics-server (its
// cmd/metrics-server/app command, flags unchanged) with Trireme's idle memory
// trimmer running beside it, as it runs in Trireme's own components: once
// start-up is over it pages out the executable's start-up-only pages, which
// otherwise count as resident for the life of the pod, and it returns freed
// heap while the server is idle.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/logs"
	"k8s.io/klog/v2"
	"sigs.k8s.io/metrics-server/cmd/metrics-server/app"

	"trireme.dev/componentbase/memtrim"
)

func main() {
	logs.InitLogs()
	ctx := genericapiserver.SetupSignalContext()
	go memtrim.RunIdleTrimmer(ctx, klog.Background().WithName("memtrim"), memtrim.IdleInterval, memtrim.IdleAllocations)
	err := app.NewMetricsServerCommand(ctx.Done()).Execute()
	logs.FlushLogs()
	if err != nil {
		// cobra has printed the error.
		os.Exit(1)
	}
}
