// Package apiregistration keeps an APIService for every group version the
// server itself serves — the built-in groups and every CustomResourceDefinition's
// served versions — as kube-apiserver's autoregistration does. The aggregator
// routes, lists (legacy /apis discovery) and orders groups by these objects.
package apiregistration
