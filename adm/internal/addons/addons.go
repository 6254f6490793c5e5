// Package addons installs and upgrades the trireme-addons chart (charts/) as a
// real Helm release through Helm's Go SDK, adopts the CoreDNS objects that an
// earlier triremeadm created without Helm, and waits for each addon to be ready.
package addons

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"trireme.dev/charts"
)

// The release triremeadm installs, as `helm list -A` shows it.
const (
	ReleaseName = "trireme-addons"
	Namespace   = "kube-system"
)

// Chart loads the chart triremeadm was built with, its appVersion stamped with
// version so that `helm list` tells which triremeadm installed it.
func Chart(version string) (*chart.Chart, error) {
	var files []*archive.BufferedFile
	err := fs.WalkDir(charts.Addons, charts.AddonsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(charts.Addons, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, charts.AddonsDir+"/")
		files = append(files, &archive.BufferedFile{Name: rel, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the embedded chart: %w", err)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("load the embedded chart: %w", err)
	}
	if version != "" {
		c.Metadata.AppVersion = version
	}
	return c, nil
}

// Inputs are the cluster facts the chart's global values carry.
type Inputs struct {
	// ImageRegistry and ImageTag name every addon image: <registry>/<name>:<tag>.
	ImageRegistry, ImageTag string
	// ClusterDomain, DNSServiceIP, PodSubnet and ServiceSubnet come from the
	// ClusterConfiguration's networking.
	ClusterDomain, DNSServiceIP, PodSubnet, ServiceSubnet string
	// SingleNode runs one replica of each addon.
	SingleNode bool
	// LocalPathDir, when set, is the local-path addon's directory for nodes
	// not listed in its nodePathMap: the node's own below a --root-dir, so
	// that volumes stay inside it and reset removes them. Empty keeps the
	// chart's default, the same path on a real machine.
	LocalPathDir string
	// FlannelPaths, when set, are the flannel addon's directories for nodes
	// not listed in its nodePaths: the node's own below a --root-dir, where
	// its containerd reads CNI configurations and reset looks. Nil keeps the
	// chart's defaults, the same paths on a real machine.
	FlannelPaths *FlannelPaths
	// LoadBalancerAnnouncer runs the loadbalancer addon's announcer
	// DaemonSet: with an external cloud provider, whose
	// cloud-controller-manager gives LoadBalancer Services their addresses.
	LoadBalancerAnnouncer bool
	// User are the ClusterConfiguration's addons.values, merged over the above.
	User map[string]any
}

// FlannelPaths are where the flannel addon works on a node: the CNI conf_dir
// its conflist goes to, host-local's dataDir (the one triremeadm's CNI
// template names, so pods from before flannel and after share one lease
// store) and flanneld's run directory (its subnet file).
type FlannelPaths struct {
	CNIConfDir, CNIDataDir, RunDir string
}

// Values are the values triremeadm installs the chart with.
func Values(in Inputs) map[string]any {
	global := map[string]any{
		"imageRegistry": in.ImageRegistry,
		"imageTag":      in.ImageTag,
		"clusterDomain": in.ClusterDomain,
		"dnsServiceIP":  in.DNSServiceIP,
		"podSubnet":     in.PodSubnet,
		"serviceSubnet": in.ServiceSubnet,
		"singleNode":    in.SingleNode,
	}
	vals := map[string]any{"global": global}
	if in.LocalPathDir != "" {
		vals["local-path"] = map[string]any{"nodePathMap": []any{
			map[string]any{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": []any{in.LocalPathDir}},
		}}
	}
	if p := in.FlannelPaths; p != nil {
		vals["flannel"] = map[string]any{"paths": map[string]any{
			"cniConfDir": p.CNIConfDir, "cniDataDir": p.CNIDataDir, "runDir": p.RunDir,
		}}
	}
	vals["loadbalancer"] = map[string]any{"announcer": map[string]any{"enabled": in.LoadBalancerAnnouncer}}
	return loader.MergeMaps(vals, in.User)
}

// Enabled reports whether user values (a ClusterConfiguration's
// addons.values) leave addon enabled: every addon is, unless its "enabled"
// is false.
func Enabled(user map[string]any, addon string) bool {
	v, ok := user[addon].(map[string]any)
	if !ok {
		return true
	}
	on, ok := v["enabled"].(bool)
	return !ok || on
}

// fieldManager is the helm CLI's own server-side apply manager.
const fieldManager = "helm"

// Client installs and upgrades the release through one apiserver.
type Client struct {
	cfg *action.Configuration
}

// NewClient talks to the cluster as getter's credentials allow; Helm's own
// logging goes to log.
func NewClient(getter genericclioptions.RESTClientGetter, log logr.Logger) (*Client, error) {
	// Helm names its server-side apply field manager after the binary; as
	// "triremeadm" it would own every field of the release, and a user's
	// `helm upgrade --set` (manager "helm") would conflict with it.
	kube.ManagedFieldsManager = fieldManager
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(logr.ToSlogHandler(log)))
	if err := cfg.Init(getter, Namespace, "secret"); err != nil {
		return nil, fmt.Errorf("set up helm: %w", err)
	}
	return &Client{cfg: cfg}, nil
}

// Installed reports whether the release exists (init's addon phase was not
// skipped).
func (c *Client) Installed() (bool, error) {
	_, err := c.cfg.Releases.Last(ReleaseName)
	switch {
	case errors.Is(err, driver.ErrReleaseNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read release %s/%s: %w", Namespace, ReleaseName, err)
	}
	return true, nil
}

// Apply installs the release, or upgrades it when it exists. An upgrade keeps
// the values a user set since (helm upgrade --set) under the ones given here,
// as `helm upgrade --reset-then-reuse-values` does. triremeadm owns the
// addons' fields, so its apply wins conflicts with other field managers (an
// earlier triremeadm's creates among them).
func (c *Client) Apply(ctx context.Context, ch *chart.Chart, vals map[string]any) (*release.Release, error) {
	installed, err := c.Installed()
	switch {
	case err != nil:
		return nil, err
	case !installed:
		in := action.NewInstall(c.cfg)
		in.ReleaseName, in.Namespace = ReleaseName, Namespace
		in.WaitStrategy = kube.HookOnlyStrategy
		in.ForceConflicts = true
		in.Timeout = 2 * time.Minute
		in.Description = "installed by triremeadm"
		r, err := in.RunWithContext(ctx, ch, vals)
		if err != nil {
			return nil, fmt.Errorf("install release %s/%s: %w", Namespace, ReleaseName, err)
		}
		return asRelease(r)
	}
	return c.Upgrade(ctx, ch, vals)
}

// Upgrade upgrades the existing release, keeping the values a user set since
// under the ones given here, as Apply does.
func (c *Client) Upgrade(ctx context.Context, ch *chart.Chart, vals map[string]any) (*release.Release, error) {
	up := action.NewUpgrade(c.cfg)
	up.Namespace = Namespace
	up.WaitStrategy = kube.HookOnlyStrategy
	up.ResetThenReuseValues = true
	up.ForceConflicts = true
	up.Timeout = 2 * time.Minute
	up.Description = "upgraded by triremeadm"
	r, err := up.RunWithContext(ctx, ReleaseName, ch, vals)
	if err != nil {
		return nil, fmt.Errorf("upgrade release %s/%s: %w", Namespace, ReleaseName, err)
	}
	return asRelease(r)
}

func asRelease(r any) (*release.Release, error) {
	rel, ok := r.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("helm returned a release of type %T", r)
	}
	return rel, nil
}

// Render returns the manifests the chart makes from vals without a cluster, as
// `helm template` does, for the golden tests and `--dry-run`.
func Render(ch *chart.Chart, vals map[string]any) (string, error) {
	rel, err := dryRun(ch, vals, func(in *action.Install) { in.Replace = true })
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// dryRun installs ch with vals client-side only, against Kubernetes
// v1.37.0 and no cluster; adjust sets what a caller needs beyond that.
func dryRun(ch *chart.Chart, vals map[string]any, adjust func(*action.Install)) (*release.Release, error) {
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(io.Discard, nil)))
	cfg.Releases = storage.Init(driver.NewMemory())
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = ReleaseName, Namespace
	in.DryRunStrategy = action.DryRunClient
	kv, err := common.ParseKubeVersion("v1.37.0")
	if err != nil {
		return nil, err
	}
	in.KubeVersion = kv
	adjust(in)
	r, err := in.Run(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %w", ch.Name(), err)
	}
	return asRelease(r)
}
