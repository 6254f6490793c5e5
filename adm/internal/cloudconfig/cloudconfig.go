// Package cloudconfig writes the cloud-controller-manager's --cloud-config
// file when a cluster with an external cloud provider has none: a valid,
// empty CloudConfiguration that says how to fill it in.
package cloudconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	api "trireme.dev/api/config/cloudconfig"
)

// Default is the file written: no machines (nodes are described by their
// own labels and node IPs) and no address pools (add some here or as
// AddressPool objects).
const Default = `# trireme-cloud-controller-manager's configuration; it re-reads this file
# when it changes, and keeps the last good one if a change is invalid.
apiVersion: ` + api.APIVersion + `
kind: ` + api.Kind + `
# machines:                      # the inventory, matched to Nodes by name
# - name: node-1
#   zone: zone-a
#   region: region-1
#   instanceType: vm.small
#   addresses: [{type: InternalIP, address: 10.0.0.11}]
# removeUnlistedNodes: false     # true: a NotReady Node not listed is deleted
# loadBalancer:
#   pools:
#   - name: default
#     addresses: ["192.168.50.0/28"]
`

// WriteDefault writes Default to path unless a file is there, and says
// whether it wrote.
func WriteDefault(path string) (string, bool, error) {
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return path, false, fmt.Errorf("cloud config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return path, false, fmt.Errorf("cloud config: %w", err)
	}
	if err := os.WriteFile(path, []byte(Default), 0o644); err != nil {
		return path, false, fmt.Errorf("cloud config: %w", err)
	}
	return path, true, nil
}
