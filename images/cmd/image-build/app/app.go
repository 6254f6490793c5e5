// Package app is the image-build command: flags parsed into a build.Spec, one archive
// written. main only calls Run, so tests drive the real command line.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/spf13/cobra"

	"trireme.dev/images/internal/build"
)

// options holds the raw flag values before they become a build.Spec.
type options struct {
	name         string
	out          string
	entrypoint   []string
	cmd          []string
	files        []string
	symlinks     []string
	dirs         []string
	baseDirs     []string
	env          []string
	user         string
	workdir      string
	arch         string
	busyboxLinks string
}

// Run executes image-build with args (without the program name), printing the result to
// stdout and usage errors to stderr. getenv supplies SOURCE_DATE_EPOCH.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	cmd := NewCommand(stdout, getenv)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	return cmd.ExecuteContext(ctx)
}

// NewCommand builds the image-build cobra command.
func NewCommand(stdout io.Writer, getenv func(string) string) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "image-build --name trireme.dev/<name>:<version> --out <archive.tar> --file <hostpath>=<imagepath>[:mode] ...",
		Short: "Write a one-layer image archive for `ctr -n k8s.io images import`",
		Long: `image-build assembles an image from host files on an empty base, without Docker
or a registry, and writes it as a docker-archive tarball. The output depends only on
the flags and the files' contents: entries are sorted, owned by 0:0 and dated
SOURCE_DATE_EPOCH (or the Unix epoch), so the same inputs give the same digests.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := o.spec(cmd.Context(), getenv)
			if err != nil {
				return err
			}
			id, err := build.WriteFile(spec, o.out)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "Wrote %s: %s (image ID %s)\n", o.out, spec.Ref, id)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "image reference with registry and tag, e.g. trireme.dev/pause:v0.1.0")
	f.StringVar(&o.out, "out", "", "archive to write, e.g. _output/images/pause.tar")
	f.StringArrayVar(&o.entrypoint, "entrypoint", nil, "entrypoint argument; repeat for each argv element")
	f.StringArrayVar(&o.cmd, "cmd", nil, "default command argument (image Cmd); repeat for each argv element")
	f.StringArrayVar(&o.files, "file", nil, "host file to copy in, as <hostpath>=<imagepath>[:octal mode]; repeatable")
	f.StringArrayVar(&o.symlinks, "symlink", nil, "symlink to create, as <target>=<linkpath> (ln -s order); repeatable")
	f.StringArrayVar(&o.dirs, "dir", nil, "directory to create, as <imagepath>[:octal mode] (default 0755), e.g. /tmp:1777; repeatable")
	f.StringArrayVar(&o.baseDirs, "base-dir", nil, "host directory tree copied onto the image root; repeatable, later wins")
	f.StringArrayVar(&o.env, "env", nil, "environment variable K=V; repeatable (a default PATH is added unless one is set)")
	f.StringVar(&o.user, "user", "", "user (uid[:gid] or name) the entrypoint runs as")
	f.StringVar(&o.workdir, "workdir", "", "working directory of the entrypoint")
	f.StringVar(&o.arch, "arch", "amd64", "image architecture")
	f.StringVar(&o.busyboxLinks, "busybox-links", "", "image path of a busybox binary given with --file; adds a symlink beside it for every applet it lists")
	for _, required := range []string{"name", "out"} {
		if err := cmd.MarkFlagRequired(required); err != nil {
			panic(err) // only if the flag above were misspelled
		}
	}
	return cmd
}

// spec turns the flags into a build.Spec, resolving busybox applets and the build date.
func (o *options) spec(ctx context.Context, getenv func(string) string) (build.Spec, error) {
	created, err := build.SourceDateEpoch(getenv)
	if err != nil {
		return build.Spec{}, err
	}
	s := build.Spec{
		Ref:          o.name,
		BaseDirs:     o.baseDirs,
		Entrypoint:   o.entrypoint,
		Cmd:          o.cmd,
		Env:          o.env,
		User:         o.user,
		WorkingDir:   o.workdir,
		Architecture: o.arch,
		Created:      created,
	}
	for _, v := range o.files {
		f, err := build.ParseFile(v)
		if err != nil {
			return build.Spec{}, fmt.Errorf("--file: %w", err)
		}
		s.Files = append(s.Files, f)
	}
	for _, v := range o.symlinks {
		l, err := build.ParseSymlink(v)
		if err != nil {
			return build.Spec{}, fmt.Errorf("--symlink: %w", err)
		}
		s.Symlinks = append(s.Symlinks, l)
	}
	for _, v := range o.dirs {
		d, err := build.ParseDir(v)
		if err != nil {
			return build.Spec{}, fmt.Errorf("--dir: %w", err)
		}
		s.Dirs = append(s.Dirs, d)
	}
	if o.busyboxLinks != "" {
		links, err := o.busyboxApplets(ctx, s.Files)
		if err != nil {
			return build.Spec{}, err
		}
		s.Symlinks = append(s.Symlinks, links...)
	}
	return s, nil
}

// busyboxApplets finds the --file that puts busybox at --busybox-links and lists its
// applets as symlinks, leaving out any path another flag already fills.
func (o *options) busyboxApplets(ctx context.Context, files []build.File) ([]build.Symlink, error) {
	target := path.Clean(o.busyboxLinks)
	var host string
	taken := map[string]bool{}
	for _, f := range files {
		taken[path.Clean(f.Target)] = true
		if path.Clean(f.Target) == target {
			host = f.Source
		}
	}
	if host == "" {
		return nil, fmt.Errorf("--busybox-links %s: no --file puts a binary there", o.busyboxLinks)
	}
	for _, l := range o.symlinks {
		if sl, err := build.ParseSymlink(l); err == nil {
			taken[path.Clean(sl.Link)] = true
		}
	}
	links, err := build.BusyboxLinks(ctx, host, target)
	if err != nil {
		return nil, fmt.Errorf("--busybox-links: %w", err)
	}
	kept := links[:0]
	for _, l := range links {
		if !taken[l.Link] {
			kept = append(kept, l)
		}
	}
	return kept, nil
}

// Main is the whole of image-build's main: it runs the command with the process's
// arguments and environment and reports failure through the exit code.
func Main() int {
	if err := Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		return 1
	}
	return 0
}
