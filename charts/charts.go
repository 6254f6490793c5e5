// Package charts carries Trireme's Helm charts inside the binaries that install
// them, so that triremeadm installs exactly the chart it was built with.
package charts

import "embed"

// Addons holds the trireme-addons chart below the directory "trireme-addons".
// "all:" keeps the files whose names start with "_" or ".", such as
// _helpers.tpl and .helmignore.
//
//go:embed all:trireme-addons
var Addons embed.FS

// AddonsDir is the chart's directory within Addons.
const AddonsDir = "trireme-addons"
