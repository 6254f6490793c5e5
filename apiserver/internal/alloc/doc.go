// Package alloc holds the allocators of Service ClusterIPs and NodePorts.
package alloc
