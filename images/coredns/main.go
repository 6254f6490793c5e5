// Command coredns is CoreDNS with the plugins a cluster's DNS needs.
package main

import (
	"context"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	"k8s.io/klog/v2"

	"trireme.dev/componentbase/memtrim"
)

// directives orders the plugins as CoreDNS's plugin.cfg does.
var directives = []string{"reload", "errors", "log", "health", "ready", "loadbalance", "cache", "loop", "kubernetes", "forward"}

func main() {
	dnsserver.Directives = directives
	// A cluster's DNS idles between queries and watch events: its
	// executable's start-up pages and freed heap go back to the node.
	// CoreDNS stops the process itself, so the trimmer runs until then.
	go memtrim.RunIdleTrimmer(context.Background(), klog.Background().WithName("memtrim"), memtrim.IdleInterval, memtrim.IdleAllocations)
	coremain.Run()
}
