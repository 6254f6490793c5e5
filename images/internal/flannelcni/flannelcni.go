// Package flannelcni writes a node's CNI network configuration for flannel:
// once flanneld has written its subnet file, a bridge network with host-local
// IPAM on the node's pod range and flannel's MTU, sorted ahead of the
// configuration containerd writes from triremeadm's template.
//
// The bridge name, network name and host-local dataDir are the template's, so
// pods started before flannel was up and after it share one bridge and one
// lease store: two stores over one range would hand out the same address twice.
package flannelcni

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Subnet is what the CNI configuration takes from flannel's subnet file.
type Subnet struct {
	// Network is the whole pod network (FLANNEL_NETWORK).
	Network netip.Prefix
	// Subnet is the node's pod range (FLANNEL_SUBNET, whose address flannel
	// writes as the range's first usable one), masked to the range itself.
	Subnet netip.Prefix
	// MTU is the MTU pods' interfaces get (FLANNEL_MTU): the external
	// interface's less the backend's encapsulation.
	MTU int
}

// ParseSubnetFile parses flannel's subnet file (subnet.env: KEY=VALUE lines).
// FLANNEL_SUBNET and FLANNEL_MTU are required; FLANNEL_NETWORK is optional.
func ParseSubnetFile(data []byte) (Subnet, error) {
	var s Subnet
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return s, fmt.Errorf("line %d: %q is not KEY=VALUE", n, line)
		}
		env[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	sub, ok := env["FLANNEL_SUBNET"]
	if !ok {
		return s, errors.New("no FLANNEL_SUBNET")
	}
	p, err := netip.ParsePrefix(sub)
	if err != nil {
		return s, fmt.Errorf("FLANNEL_SUBNET: %w", err)
	}
	s.Subnet = p.Masked()
	if nw, ok := env["FLANNEL_NETWORK"]; ok {
		if s.Network, err = netip.ParsePrefix(nw); err != nil {
			return s, fmt.Errorf("FLANNEL_NETWORK: %w", err)
		}
		s.Network = s.Network.Masked()
		if !s.Network.Contains(s.Subnet.Addr()) || s.Network.Bits() > s.Subnet.Bits() {
			return s, fmt.Errorf("FLANNEL_SUBNET %s is not inside FLANNEL_NETWORK %s", s.Subnet, s.Network)
		}
	}
	mtu, ok := env["FLANNEL_MTU"]
	if !ok {
		return s, errors.New("no FLANNEL_MTU")
	}
	if s.MTU, err = strconv.Atoi(mtu); err != nil {
		return s, fmt.Errorf("FLANNEL_MTU: %w", err)
	}
	// 68 is IPv4's minimum MTU; 65535 the largest an IPv4 packet can be.
	if s.MTU < 68 || s.MTU > 65535 {
		return s, fmt.Errorf("FLANNEL_MTU %d out of range [68, 65535]", s.MTU)
	}
	return s, nil
}

// Network names the node's CNI network and where its state lives.
type Network struct {
	// Name is the CNI network's name; host-local keeps its leases in
	// DataDir/Name.
	Name string
	// Bridge is the Linux bridge pods attach to.
	Bridge string
	// DataDir is host-local's dataDir.
	DataDir string
}

// Conflist returns the CNI configuration list for subnet: bridge (the node's
// gateway, hairpin for Services that lead back to the same pod, no
// masquerade: flanneld's --ip-masq masquerades what leaves the pod network and
// traffic between pods keeps its source) with host-local on the node's range,
// then portmap for hostPorts.
func Conflist(n Network, s Subnet) ([]byte, error) {
	if n.Name == "" || n.Bridge == "" || n.DataDir == "" {
		return nil, fmt.Errorf("network %+v: name, bridge and dataDir are required", n)
	}
	if !s.Subnet.IsValid() || s.MTU == 0 {
		return nil, fmt.Errorf("subnet %+v: subnet and MTU are required", s)
	}
	defaultRoute := "0.0.0.0/0"
	if s.Subnet.Addr().Is6() {
		defaultRoute = "::/0"
	}
	type obj = map[string]any
	conf := obj{
		"cniVersion": "0.4.0",
		"name":       n.Name,
		"plugins": []obj{
			{
				"type":        "bridge",
				"bridge":      n.Bridge,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"mtu":         s.MTU,
				"ipam": obj{
					"type":    "host-local",
					"dataDir": n.DataDir,
					"ranges":  [][]obj{{{"subnet": s.Subnet.String()}}},
					"routes":  []obj{{"dst": defaultRoute}},
				},
			},
			{"type": "portmap", "capabilities": obj{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so that containerd, which reloads conf_dir on every
// change, never reads half a file. The temporary name ends in ".tmp", which
// CNI's loader ignores.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Options configure Run.
type Options struct {
	// SubnetFile is flanneld's subnet file.
	SubnetFile string
	// ConfFile is the conflist to write (in containerd's conf_dir).
	ConfFile string
	// Network is the CNI network written.
	Network Network
	// Interval is how often the subnet file and conflist are checked.
	Interval time.Duration
}

// Sync writes the conflist for the subnet file's current content unless the
// file already holds it, and reports whether it wrote.
func Sync(o Options) (bool, error) {
	data, err := os.ReadFile(o.SubnetFile)
	if err != nil {
		return false, err
	}
	s, err := ParseSubnetFile(data)
	if err != nil {
		return false, fmt.Errorf("parse %s: %w", o.SubnetFile, err)
	}
	want, err := Conflist(o.Network, s)
	if err != nil {
		return false, err
	}
	if have, err := os.ReadFile(o.ConfFile); err == nil && bytes.Equal(have, want) {
		return false, nil
	}
	if err := WriteFileAtomic(o.ConfFile, want, 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", o.ConfFile, err)
	}
	return true, nil
}

// Run keeps the conflist in step with flanneld's subnet file until ctx ends:
// it waits for the file, writes the conflist, and rewrites it when the file
// changes (a new MTU) or the conflist is removed. The conflist stays when Run
// ends: pods keep their network while flannel restarts or is upgraded.
func Run(ctx context.Context, log logr.Logger, o Options) error {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	waiting := false
	for {
		wrote, err := Sync(o)
		switch {
		case errors.Is(err, os.ErrNotExist) && !waiting:
			log.Info("Waiting for flannel's subnet file", "path", o.SubnetFile)
			waiting = true
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			log.Error(err, "Cannot write the CNI configuration")
		case wrote:
			log.Info("Wrote the CNI configuration", "path", o.ConfFile, "subnetFile", o.SubnetFile)
			waiting = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Check reports whether path holds a conflist Run wrote: the readiness of the
// container that runs it.
func Check(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var conf struct {
		Name    string            `json:"name"`
		Plugins []json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(data, &conf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if conf.Name == "" || len(conf.Plugins) == 0 {
		return fmt.Errorf("%s: no network name or plugins", path)
	}
	return nil
}
