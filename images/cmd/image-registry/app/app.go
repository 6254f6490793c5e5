// Package app is the image-registry command: docker-archives (as image-build
// writes them) pushed into a registry it serves over plain HTTP, for nodes
// whose containerd mirrors a registry that cannot be reached from here
// (hosts.toml), so that pods with imagePullPolicy Always pull them.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/spf13/cobra"
)

// Run executes image-registry with args (without the program name) until ctx
// ends, printing what it serves to stdout and errors to stderr. ready, when
// not nil, receives the address it listens on once every archive is served.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- string) error {
	cmd := NewCommand(stdout, ready)
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	return cmd.ExecuteContext(ctx)
}

// NewCommand builds the image-registry cobra command.
func NewCommand(stdout io.Writer, ready chan<- string) *cobra.Command {
	var listen, dir string
	cmd := &cobra.Command{
		Use:   "image-registry --listen <addr:port> --dir <blobs> <archive.tar>...",
		Short: "Serve docker-archives as a registry, under the names they carry",
		Long: `image-registry pushes each docker-archive into a registry it serves over plain
HTTP at --listen, under the repository and tag of the name the archive carries
without its registry (registry.k8s.io/e2e-test-images/kitten:1.8 is served as
e2e-test-images/kitten:1.8), then serves until SIGTERM or SIGINT. Blobs go to
--dir. A node's containerd pulls them when its hosts.toml for that registry
names this one as a mirror.`,
		Args:         cobra.MinimumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, archives []string) error {
			if dir == "" {
				return errors.New("--dir is required")
			}
			return serve(cmd.Context(), listen, dir, archives, stdout, ready)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:5000", "address and port to serve on")
	f.StringVar(&dir, "dir", "", "directory for the blobs (created if missing)")
	return cmd
}

// Main runs the command with the process's arguments until SIGTERM or SIGINT.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		return 1
	}
	return 0
}

func serve(ctx context.Context, listen, dir string, archives []string, stdout io.Writer, ready chan<- string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	handler := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)),
		registry.Logger(log.New(io.Discard, "", 0)))
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	// The pushes' own client: Go's transport dials spare connections that
	// may never carry a request, and the server's Shutdown waits for those;
	// closing them once pushed lets it return at once.
	pusher := remote.DefaultTransport.(*http.Transport).Clone()
	n, err := pushAll(ctx, pusher, addr, archives)
	pusher.CloseIdleConnections()
	if err == nil {
		fmt.Fprintf(stdout, "image-registry: serving %d image(s) at http://%s\n", n, addr)
		if ready != nil {
			ready <- addr
		}
		select {
		case <-ctx.Done():
		case err = <-served:
		}
	}
	// Pulls under way get 5 s to finish; what a client still holds open
	// then (a spare connection of its own, idle) is closed.
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdown); serr != nil {
		_ = srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// pushAll pushes every image of each archive, under each of its tags, to the
// registry at addr through tr, and returns how many tags it pushed.
func pushAll(ctx context.Context, tr http.RoundTripper, addr string, archives []string) (int, error) {
	n := 0
	for _, archive := range archives {
		manifest, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(archive) })
		if err != nil {
			return n, fmt.Errorf("read %s: %w", archive, err)
		}
		for _, desc := range manifest {
			for _, t := range desc.RepoTags {
				if err := push(ctx, tr, addr, archive, t); err != nil {
					return n, err
				}
				n++
			}
		}
	}
	return n, nil
}

// push writes the image tagged ref in archive to the registry at addr,
// through tr, as ref's repository and tag.
func push(ctx context.Context, tr http.RoundTripper, addr, archive, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("%s: image name %q: %w", archive, ref, err)
	}
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		return fmt.Errorf("read %s from %s: %w", ref, archive, err)
	}
	local, err := name.NewTag(addr+"/"+tag.RepositoryStr()+":"+tag.TagStr(), name.Insecure)
	if err != nil {
		return err
	}
	if err := remote.Write(local, img, remote.WithContext(ctx), remote.WithTransport(tr)); err != nil {
		return fmt.Errorf("push %s from %s: %w", ref, archive, err)
	}
	return nil
}
