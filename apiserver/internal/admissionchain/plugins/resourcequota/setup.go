// Package resourcequota registers upstream's ResourceQuota admission plugin
// (k8s.io/apiserver) and supplies what it cannot know by itself: how much
// of each quota resource a pod, service or claim uses. Any other resource
// is counted as count/<resource>.<group> by the library.
package resourcequota

import (
	"k8s.io/apiserver/pkg/admission"
	library "k8s.io/apiserver/pkg/admission/plugin/resourcequota"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = library.PluginName

// Register adds ResourceQuota to plugins.
func Register(plugins *admission.Plugins) { library.Register(plugins) }
