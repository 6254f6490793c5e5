// Package containerd configures and starts the node's container runtime: a
// containerd 1.6 config.toml (version 2) whose CRI plugin uses Trireme's pause image,
// runc, the CNI plugins in /usr/lib/cni and a CNI conf_template (bridge, host-local,
// portmap) that containerd fills with the pod CIDR the kubelet hands it, and which
// sets restrict_oom_score_adj on hosts that refuse to lower OOM scores. Registry
// mirrors and certificates are containerd's hosts.toml files below
// /etc/containerd/certs.d. Pods'
// network namespaces are mounted below containerd's state directory, where
// "ip netns" cannot shadow them.
package containerd

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// Config is what the config file depends on.
type Config struct {
	// Root, State and Socket are containerd's directories and gRPC socket.
	Root, State, Socket string
	// OptDir is the "opt" plugin's directory.
	OptDir string
	// SandboxImage is the pause image.
	SandboxImage string
	// RestrictOOMScoreAdj keeps containers' OOM scores at or above containerd's own.
	RestrictOOMScoreAdj bool
	// CNIBinDir, CNIConfDir and CNITemplate configure the CRI plugin's networking.
	CNIBinDir, CNIConfDir, CNITemplate string
	// RegistryHostsDir is the CRI plugin's registry config_path: hosts.toml
	// files, <dir>/<registry>/hosts.toml, read on every pull (mirrors,
	// certificates), so a change needs no restart.
	RegistryHostsDir string
}

var configTemplate = template.Must(template.New("config").Funcs(template.FuncMap{"q": q}).Parse(`# Written by triremeadm (init phase container-runtime); containerd 1.6 format.
version = 2
root = {{ q .Root }}
state = {{ q .State }}

[grpc]
  address = {{ q .Socket }}

[plugins."io.containerd.internal.v1.opt"]
  path = {{ q .OptDir }}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = {{ q .SandboxImage }}
  restrict_oom_score_adj = {{ .RestrictOOMScoreAdj }}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # Pods' network namespaces are mounted below containerd's state directory,
  # not in /run/netns: "ip netns add" bind-mounts /run/netns onto itself,
  # shadowing the mounts already there, and containerd could then never
  # remove them (unlinkat: device or resource busy).
  netns_mounts_under_state_dir = true

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = {{ q .CNIBinDir }}
    conf_dir = {{ q .CNIConfDir }}
    conf_template = {{ q .CNITemplate }}
{{- if .RegistryHostsDir }}

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = {{ q .RegistryHostsDir }}
{{- end }}
`))

// Render returns config.toml for c.
func Render(c Config) ([]byte, error) {
	var b bytes.Buffer
	if err := configTemplate.Execute(&b, c); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// q quotes a TOML basic string.
func q(s string) string { return strconv.Quote(s) }

// NetNSDir is where containerd with state directory state mounts its pods'
// network namespaces (netns_mounts_under_state_dir: the CRI plugin's own
// state directory).
func NetNSDir(state string) string {
	return filepath.Join(state, "io.containerd.grpc.v1.cri", "netns")
}

// LegacyNetNSDir is where containerd mounted them before: a cluster that an
// earlier triremeadm installed still has its pods' namespaces there.
const LegacyNetNSDir = "/run/netns"

// BridgeName is the node's CNI bridge, which reset deletes.
const BridgeName = "trireme0"

// CNITemplate is the conf_template: a bridge network with host-local IPAM over the
// node's pod CIDRs and portmap for hostPorts. containerd's CRI plugin sets up each
// sandbox's loopback itself with the loopback plugin from bin_dir, so it is not in
// the chain. dataDir keeps host-local's leases where reset can find them.
//
// ipMasq masquerades what pods send beyond the node's range. It is off when a
// pod network addon (flannel's --ip-masq) masquerades what leaves the pod
// network: the bridge's own rule, which each pod keeps until it is deleted,
// would also hide the source address of a pod started before the addon from
// pods on other nodes.
func CNITemplate(dataDir string, ipMasq bool) []byte {
	return []byte(`{
  "cniVersion": "0.4.0",
  "name": "trireme",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "` + BridgeName + `",
      "isGateway": true,
      "ipMasq": ` + strconv.FormatBool(ipMasq) + `,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": ` + strconv.Quote(dataDir) + `,
        "ranges": [{{range $i, $range := .PodCIDRRanges}}{{if $i}}, {{end}}[{"subnet": "{{$range}}"}]{{end}}],
        "routes": [{{range $i, $route := .Routes}}{{if $i}}, {{end}}{"dst": "{{$route}}"}{{end}}]
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
`)
}

// GeneratedCNIConfig is the file containerd writes from the template into conf_dir.
const GeneratedCNIConfig = "10-containerd-net.conflist"

// HostDeniesLoweringOOMScore reports whether this host refuses to lower a process's
// OOM score adjustment, by having a child process try to set its own to -998 (what
// the kubelet asks for sandboxes). Where it is refused, runc fails to start
// containers unless containerd restricts the adjustments.
func HostDeniesLoweringOOMScore(ctx context.Context) (bool, error) {
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", "echo -998 > /proc/self/oom_score_adj").CombinedOutput()
	if err == nil {
		return false, nil
	}
	if _, ok := err.(*exec.ExitError); ok {
		return true, nil
	}
	return false, fmt.Errorf("probe OOM score adjustment: %w: %s", err, strings.TrimSpace(string(out)))
}

// WaitReady waits until containerd at socket answers `ctr version`.
func WaitReady(ctx context.Context, socket string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close()
			out, err := exec.CommandContext(ctx, "ctr", "--address", socket, "version").CombinedOutput()
			if err == nil {
				return nil
			}
			last = fmt.Errorf("ctr version: %w: %s", err, strings.TrimSpace(string(out)))
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("containerd at %s not ready after %s: %v", socket, timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
