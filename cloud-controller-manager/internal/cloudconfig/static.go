package cloudconfig

import api "trireme.dev/api/config/cloudconfig"

// Static returns a Watcher of a configuration that never changes; nil
// means an empty one. For tests and for providers made from a reader.
func Static(cfg *api.CloudConfiguration) *Watcher {
	if cfg == nil {
		cfg = &api.CloudConfiguration{}
		api.SetDefaults(cfg)
	}
	return &Watcher{cfg: cfg, interval: DefaultReloadInterval}
}
