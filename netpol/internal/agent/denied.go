package agent

import (
	"context"
	"net/netip"
	"strings"

	"golang.org/x/sys/unix"

	"trireme.dev/netpol/internal/nflog"
	"trireme.dev/netpol/internal/policy"
)

// LogDenied logs each denied packet the table logs to the configured NFLOG
// group (rate-limited there), with what denied it: the pod and the
// NetworkPolicies that isolate it, or the ClusterNetworkPolicy rule. It
// returns when ctx ends or the group cannot be read.
func (a *Agent) LogDenied(ctx context.Context) error {
	r, err := nflog.Open(a.cfg.LogGroup)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		r.Close()
	}()
	log := a.cfg.Log.WithName("denied")
	log.Info("Logging denied packets", "nflogGroup", a.cfg.LogGroup)
	for {
		packets, err := r.Read()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			log.Error(err, "Reading denied packets")
			continue
		}
		for _, p := range packets {
			kv := []any{"src", p.Src, "dst", p.Dst, "protocol", protocolName(p.Protocol)}
			if p.DstPort != 0 {
				kv = append(kv, "srcPort", p.SrcPort, "dstPort", p.DstPort)
			}
			log.Info("Denied", append(a.deniedBy(p.Prefix, p.Src, p.Dst), kv...)...)
		}
	}
}

// deniedBy reads a log prefix ("np DIRECTION NAMESPACE/POD", "cnp
// DIRECTION POLICY RULE" or "unknown") into log fields.
func (a *Agent) deniedBy(prefix string, src, dst netip.Addr) []any {
	f := strings.Fields(prefix)
	switch {
	case len(f) == 3 && f[0] == "np":
		ns, pod, _ := strings.Cut(f[2], "/")
		kv := []any{"direction", f[1], "namespace", ns, "pod", pod}
		a.mu.Lock()
		res := a.resolved
		a.mu.Unlock()
		if res != nil {
			for _, pr := range res.Pods {
				if pr.Pod.Namespace == ns && pr.Pod.Name == pod {
					policies := pr.IngressPolicies
					if f[1] == string(policy.Egress) {
						policies = pr.EgressPolicies
					}
					kv = append(kv, "networkPolicies", policies)
				}
			}
		}
		return kv
	case len(f) == 4 && f[0] == "cnp":
		return []any{"direction", f[1], "clusterNetworkPolicy", f[2], "rule", f[3]}
	case prefix == "unknown":
		return []any{"reason", "no known pod has the destination address yet"}
	}
	return []any{"prefix", prefix}
}

func protocolName(p uint8) string {
	switch p {
	case unix.IPPROTO_TCP:
		return "TCP"
	case unix.IPPROTO_UDP:
		return "UDP"
	case unix.IPPROTO_SCTP:
		return "SCTP"
	case unix.IPPROTO_ICMP:
		return "ICMP"
	}
	return "other"
}
