package framework

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cri "k8s.io/cri-api/pkg/apis"
	remote "k8s.io/cri-client/pkg"

	"trireme.dev/componentbase/testcluster"
)

// ContainerdOptions tune a private containerd.
type ContainerdOptions struct {
	// SandboxImage is the docker-archive of the pause image; its name
	// becomes the CRI sandbox_image. Default: _output/images/pause.tar.
	SandboxImage string
	// Images are further archives to import (busybox.tar by default).
	Images []string
}

// Containerd is a containerd process of the test's own: root, state,
// socket, CNI configuration and host-local IPAM data all under one
// temporary directory, a bridge with a name no other run uses. Its CRI
// plugin renders the CNI configuration from a template once the kubelet
// passes the node's pod CIDR (UpdateRuntimeConfig), as a cluster's does.
type Containerd struct {
	dir    string
	proc   *testcluster.Process
	log    *testcluster.TailBuffer
	socket string
	// Bridge is the name of the Linux bridge pods attach to.
	Bridge string
	// Images maps each imported archive's base name (busybox.tar) to the
	// image name it holds.
	Images map[string]string
	// SandboxImage is the pause image's name.
	SandboxImage string
	// RestrictOOMScoreAdj is whether the config had to set
	// restrict_oom_score_adj (this machine refuses lowering OOM scores).
	RestrictOOMScoreAdj bool
}

// CanLowerOOMScoreAdj reports whether a process here may lower its OOM
// score; a child shell tries, so this process keeps its own.
func CanLowerOOMScoreAdj() bool {
	cmd := exec.Command("/bin/sh", "-c", `cur=$(cat /proc/self/oom_score_adj); want=$((cur - 1)); [ "$want" -lt -1000 ] && exit 0; echo "$want" > /proc/self/oom_score_adj`)
	return cmd.Run() == nil
}

const containerdConfig = `version = 2
root = "{{.Dir}}/root"
state = "{{.Dir}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "{{.Socket}}"

[ttrpc]
  address = "{{.Socket}}.ttrpc"

# containerd's pprof, for profiling a run:
# curl --unix-socket <dir>/debug.sock http://x/debug/pprof/profile
[debug]
  address = "{{.Dir}}/debug.sock"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "{{.Dir}}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.SandboxImage}}"
  restrict_oom_score_adj = {{.RestrictOOM}}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  max_container_log_line_size = 16384
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{{.Dir}}/cni/net.d"
    conf_template = "{{.Dir}}/cni/template.json"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        # runc's state is volatile too; its default is /run/containerd/runc.
        Root = "{{.Dir}}/state/runc"
`

// The bridge has no masquerading: pods are reached from the host, and
// nothing is added to the host's iptables.
const cniTemplate = `{
  "cniVersion": "0.4.0",
  "name": "{{.Network}}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "{{.Bridge}}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "{{.Dir}}/cni/ipam",
        "ranges": [[{"subnet": "{{"{{"}}.PodCIDR{{"}}"}}"}]]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

// StartContainerd starts a private containerd and imports the images. On
// error nothing is left running or on disk.
func StartContainerd(ctx context.Context, opts ContainerdOptions) (*Containerd, error) {
	if _, err := exec.LookPath("containerd"); err != nil {
		return nil, fmt.Errorf("containerd not found: apt-get install -y containerd runc containernetworking-plugins")
	}
	images := testcluster.ImageDir()
	if opts.SandboxImage == "" {
		opts.SandboxImage = filepath.Join(images, "pause.tar")
	}
	if opts.Images == nil {
		opts.Images = []string{filepath.Join(images, "busybox.tar")}
	}
	sandboxImage, err := ArchiveImageName(opts.SandboxImage)
	if err != nil {
		return nil, fmt.Errorf("%w (run `make images` first)", err)
	}
	// Under /var/tmp, not a tmpfs: overlayfs needs a real file system.
	dir, err := os.MkdirTemp("/var/tmp", "trireme-e2e-containerd-")
	if err != nil {
		return nil, err
	}
	suffix := randomHex(3)
	c := &Containerd{
		dir:                 dir,
		log:                 testcluster.NewTailBuffer(256 << 10),
		socket:              filepath.Join(dir, "containerd.sock"),
		Bridge:              "trk" + suffix,
		Images:              map[string]string{},
		SandboxImage:        sandboxImage,
		RestrictOOMScoreAdj: !CanLowerOOMScoreAdj(),
	}
	if err := c.writeConfig(suffix); err != nil {
		c.cleanupFiles()
		return nil, err
	}
	args := []string{"--config", filepath.Join(dir, "config.toml"), "--log-level", "info"}
	fmt.Fprintf(c.log, "=== start containerd %s\n", strings.Join(args, " "))
	c.proc, err = testcluster.StartProcess("containerd", args, c.log)
	if err != nil {
		c.cleanupFiles()
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	for _, archive := range append([]string{opts.SandboxImage}, opts.Images...) {
		name, err := c.Import(ctx, archive)
		if err != nil {
			return nil, errors.Join(err, c.Close())
		}
		c.Images[filepath.Base(archive)] = name
	}
	return c, nil
}

func (c *Containerd) writeConfig(suffix string) error {
	for _, d := range []string{"root", "state", "opt", "cni/net.d", "cni/ipam"} {
		if err := os.MkdirAll(filepath.Join(c.dir, d), 0o755); err != nil {
			return err
		}
	}
	// containerd's state is volatile, on a tmpfs as /run/containerd is on
	// a host whose /run is one. This machine's /run is on the root file
	// system (ext4 without a journal), where every new inode is found by
	// scanning past recently deleted ones: a burst of pods after a burst
	// of deletions spent 7 % of the machine's CPU there.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "mode=0711", "tmpfs", filepath.Join(c.dir, "state")).CombinedOutput(); err != nil {
		return fmt.Errorf("mount a tmpfs for containerd's state: %w: %s", err, out)
	}
	data := map[string]any{
		"Dir": c.dir, "Socket": c.socket, "SandboxImage": c.SandboxImage,
		"RestrictOOM": c.RestrictOOMScoreAdj, "Bridge": c.Bridge, "Network": "trireme-e2e-" + suffix,
	}
	for name, tmpl := range map[string]string{"config.toml": containerdConfig, "cni/template.json": cniTemplate} {
		t, err := template.New(name).Parse(tmpl)
		if err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(c.dir, name))
		if err != nil {
			return err
		}
		if err := t.Execute(f, data); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Containerd) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-c.proc.Exited():
			return fmt.Errorf("containerd exited: %v\n%s", c.proc.ExitError(), c.LogTail(50))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		rs, err := c.RuntimeService(ctx)
		if err != nil {
			continue
		}
		_, err = rs.Version(ctx, "v1")
		_ = rs.Close(ctx)
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("containerd not ready after 30s\n%s", c.LogTail(50))
}

// Endpoint is the CRI endpoint for --container-runtime-endpoint.
func (c *Containerd) Endpoint() string { return "unix://" + c.socket }

// PID is containerd's process ID.
func (c *Containerd) PID() int { return c.proc.PID() }

// Dir is the containerd's private directory.
func (c *Containerd) Dir() string { return c.dir }

// LogTail returns the last lines of containerd's log.
func (c *Containerd) LogTail(n int) string { return testcluster.Tail(c.log.String(), n) }

// RuntimeService returns a CRI client; the caller closes it.
func (c *Containerd) RuntimeService(ctx context.Context) (cri.RuntimeService, error) {
	return remote.NewRemoteRuntimeService(ctx, c.Endpoint(), 30*time.Second, noop.NewTracerProvider(), false)
}

// Import loads a docker-archive or OCI tarball into the k8s.io namespace
// and returns the image name it holds.
func (c *Containerd) Import(ctx context.Context, archive string) (string, error) {
	name, err := ArchiveImageName(archive)
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "ctr", "--address", c.socket, "-n", "k8s.io", "images", "import", "--no-unpack=false", archive).CombinedOutput()
	if err != nil {
		// Older ctr lacks --no-unpack; retry plainly.
		out, err = exec.CommandContext(ctx, "ctr", "--address", c.socket, "-n", "k8s.io", "images", "import", archive).CombinedOutput()
	}
	if err != nil {
		return "", fmt.Errorf("ctr images import %s: %w: %s", archive, err, out)
	}
	return name, nil
}

// ArchiveImageName reads the first RepoTag of a docker-archive.
func ArchiveImageName(archive string) (string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return "", fmt.Errorf("open image archive: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return "", fmt.Errorf("%s has no manifest.json", archive)
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", archive, err)
		}
		if h.Name != "manifest.json" {
			continue
		}
		var manifest []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&manifest); err != nil {
			return "", fmt.Errorf("%s manifest.json: %w", archive, err)
		}
		if len(manifest) == 0 || len(manifest[0].RepoTags) == 0 {
			return "", fmt.Errorf("%s names no image", archive)
		}
		return manifest[0].RepoTags[0], nil
	}
}

// Close removes every pod sandbox (which stops its containers and shims
// and tears its network down), stops containerd by PID, deletes the
// bridge and removes the directory.
func (c *Containerd) Close() error {
	var errs []error
	if c.proc != nil {
		select {
		case <-c.proc.Exited():
		default:
			errs = append(errs, c.removeSandboxes())
		}
		if err := c.proc.Stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := os.Stat("/sys/class/net/" + c.Bridge); err == nil {
		if out, err := exec.Command("ip", "link", "del", c.Bridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("delete bridge %s: %w: %s", c.Bridge, err, out))
		}
	}
	errs = append(errs, c.cleanupFiles())
	return errors.Join(errs...)
}

func (c *Containerd) removeSandboxes() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs, err := c.RuntimeService(ctx)
	if err != nil {
		return err
	}
	defer rs.Close(ctx)
	sandboxes, err := rs.ListPodSandbox(ctx, nil)
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	var errs []error
	for _, s := range sandboxes {
		if err := removeSandbox(rs, s.Id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeSandbox stops and removes one sandbox, with a time of its own: on a
// loaded machine the network teardown of each may take seconds, and one
// budget for them all ran out.
func removeSandbox(rs cri.RuntimeService, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A kubelet stopping a moment ago may have removed it meanwhile.
	if err := rs.StopPodSandbox(ctx, id); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("stop sandbox %s: %w", id, err)
	}
	if err := rs.RemovePodSandbox(ctx, id); err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("remove sandbox %s: %w", id, err)
	}
	return nil
}

// cleanupFiles unmounts what is left under the directory (snapshots,
// shm) and removes it.
func (c *Containerd) cleanupFiles() error {
	if data, err := os.ReadFile("/proc/self/mounts"); err == nil {
		var mounts []string
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) > 1 && strings.HasPrefix(f[1], c.dir+"/") {
				mounts = append(mounts, f[1])
			}
		}
		for i := len(mounts) - 1; i >= 0; i-- {
			_ = exec.Command("umount", "-l", mounts[i]).Run()
		}
	}
	return os.RemoveAll(c.dir)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
