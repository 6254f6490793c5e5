// Command flannel-cni-config runs beside flanneld in the flannel DaemonSet
// and writes the node's CNI configuration from flanneld's subnet file (see
// images/internal/flannelcni). With -check it only reports, by its exit
// status, whether the configuration is there: the container's readiness probe.
// With -check-nodes it checks flannel on every node from inside a pod, with
// the pod's service account: the chart's helm test.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/memtrim"
	"trireme.dev/images/internal/flannelcni"
)

func main() {
	var o flannelcni.Options
	flag.StringVar(&o.SubnetFile, "subnet-file", "/run/flannel/subnet.env", "flanneld's subnet file")
	flag.StringVar(&o.ConfFile, "conf-file", "/etc/cni/net.d/05-flannel.conflist", "the CNI configuration to write; its name must sort ahead of containerd's 10-containerd-net.conflist")
	flag.StringVar(&o.Network.Name, "network-name", "trireme", "the CNI network's name (triremeadm's template's)")
	flag.StringVar(&o.Network.Bridge, "bridge", "trireme0", "the pods' bridge (triremeadm's template's)")
	flag.StringVar(&o.Network.DataDir, "data-dir", "/var/lib/cni/networks/trireme", "host-local's dataDir (triremeadm's template's)")
	flag.DurationVar(&o.Interval, "interval", 2*time.Second, "how often to check the subnet file and the configuration")
	check := flag.Bool("check", false, "only check that -conf-file holds a configuration")
	checkNodes := flag.Bool("check-nodes", false, "only check, from inside a pod, that every node runs flannel")
	healthzPort := flag.Int("healthz-port", 8471, "with -check-nodes: flanneld's healthz port")
	v := flag.Int("v", 0, "log verbosity")
	flag.Parse()
	if *checkNodes {
		if err := checkAllNodes(*healthzPort); err != nil {
			fmt.Fprintln(os.Stderr, "flannel-cni-config:", err)
			os.Exit(1)
		}
		fmt.Println("flannel runs on every node")
		return
	}
	if *check {
		if err := flannelcni.Check(o.ConfFile); err != nil {
			fmt.Fprintln(os.Stderr, "flannel-cni-config:", err)
			os.Exit(1)
		}
		return
	}
	log, flush, err := logging.New("text", *v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flannel-cni-config:", err)
		os.Exit(1)
	}
	defer flush()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// It sleeps between checks of two small files: its executable's
	// start-up pages go back to the node.
	go memtrim.RunIdleTrimmer(ctx, log.WithName("memtrim"), memtrim.IdleInterval, memtrim.IdleAllocations)
	if err := flannelcni.Run(ctx, log, o); err != nil {
		log.Error(err, "Stopped")
		flush()
		os.Exit(1)
	}
}

func checkAllNodes(healthzPort int) error {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("in-cluster configuration: %w", err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return flannelcni.CheckNodes(ctx, c, healthzPort, flannelcni.HTTPHealth)
}
