package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/copycerts"
	"trireme.dev/adm/internal/etcdmember"
	"trireme.dev/adm/internal/etcdsnapshot"
	"trireme.dev/adm/internal/expiration"
	"trireme.dev/adm/internal/images"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/renew"
	"trireme.dev/adm/internal/reset"
	"trireme.dev/adm/internal/staticpod"
	"trireme.dev/adm/internal/supervisor"
	"trireme.dev/adm/internal/token"
	"trireme.dev/adm/internal/version"
	"trireme.dev/adm/internal/workflow"
)

func newResetCommand(g *global, out io.Writer) *cobra.Command {
	var (
		certDir     string
		etcdDataDir string
		force       bool
	)
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Undo what init made on this machine: stop its processes and remove its files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := paths.Paths{Root: g.root}
			in := reset.Inputs{Paths: p, PKIDir: p.In(certDir), EtcdDataDir: p.In(etcdDataDir), Network: true}
			if !force {
				fmt.Fprintf(out, "reset stops the processes triremeadm started and removes:\n  %s\nProceed? [y/N] ", strings.Join(reset.Targets(in), "\n  "))
				line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if !strings.EqualFold(strings.TrimSpace(line), "y") {
					return errors.New("aborted (use --force to skip the question)")
				}
			}
			// Read before the cleanup removes the manifest that names it.
			snapshots := scheduledSnapshotDir(p)
			r := workflow.NewRunner(out)
			err := r.RunOne(cmd.Context(), workflow.Phase{Name: "cleanup", Short: "Stop supervised processes and remove files",
				Run: func(_ context.Context, s *workflow.Status) error { return reset.Run(in, s.Printf) }})
			if err != nil {
				return err
			}
			// Snapshots are the way back after a reset (init --etcd-restore),
			// so they stay, as images and logs do.
			fmt.Fprintf(out, "\nThis machine is reset. Images in containerd, logs in %s and etcd snapshots in %s were kept.\n", p.LogDir(), snapshots)
			return nil
		},
	}
	cmd.Flags().StringVar(&certDir, "cert-dir", v1alpha1.DefaultCertificatesDir, "The certificates directory to remove.")
	cmd.Flags().StringVar(&etcdDataDir, "etcd-data-dir", v1alpha1.DefaultEtcdDataDir, "The local etcd member's data directory to remove.")
	cmd.Flags().BoolVarP(&force, "force", "f", false, "Do not ask for confirmation.")
	return cmd
}

func newTokenCommand(g *global, out io.Writer) *cobra.Command {
	var kubeconfigPath string
	cmd := &cobra.Command{Use: "token", Short: "Manage bootstrap tokens"}
	cmd.PersistentFlags().StringVar(&kubeconfigPath, "kubeconfig", "/etc/trireme/admin.conf", "The kubeconfig to talk to the cluster with.")
	kc := func() string { return paths.Paths{Root: g.root}.In(kubeconfigPath) }
	var (
		ttl         time.Duration
		description string
		groups      []string
		usages      []string
	)
	create := &cobra.Command{
		Use:   "create [token]",
		Short: "Create a bootstrap token (random unless given) and print it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := clientFor(kc())
			if err != nil {
				return err
			}
			t := &v1alpha1.BootstrapToken{TTL: &metav1.Duration{Duration: ttl}, Description: description, Groups: groups, Usages: usages}
			if len(args) == 1 {
				t.Token = args[0]
			}
			v1alpha1.SetDefaultsBootstrapToken(t)
			if errs := v1alpha1.ValidateBootstrapToken(t, nil); len(errs) > 0 {
				return errs.ToAggregate()
			}
			if err := token.Create(cmd.Context(), c, t, time.Now()); err != nil {
				return err
			}
			fmt.Fprintln(out, t.Token)
			return nil
		},
	}
	create.Flags().DurationVar(&ttl, "ttl", v1alpha1.DefaultTokenTTL, "How long the token lives; 0 means forever.")
	create.Flags().StringVar(&description, "description", "", "What the token is for.")
	create.Flags().StringSliceVar(&groups, "groups", []string{v1alpha1.DefaultNodeBootstrapGroup}, "Extra groups the token authenticates as.")
	create.Flags().StringSliceVar(&usages, "usages", v1alpha1.DefaultTokenUsages, "How the token may be used: signing, authentication.")
	list := &cobra.Command{
		Use:   "list",
		Short: "List bootstrap tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := clientFor(kc())
			if err != nil {
				return err
			}
			infos, err := token.List(cmd.Context(), c)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
			fmt.Fprintln(tw, "TOKEN\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
			for _, i := range infos {
				ttl, exp := "<forever>", "<never>"
				if i.Expires != nil {
					ttl, exp = expiration.Residual(*i.Expires, time.Now()), i.Expires.UTC().Format(time.RFC3339)
				}
				desc := i.Description
				if desc == "" {
					desc = "<none>"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", i.Token, ttl, exp, strings.Join(i.Usages, ","), desc, strings.Join(i.Groups, ","))
			}
			return tw.Flush()
		},
	}
	del := &cobra.Command{
		Use:   "delete <token or id>...",
		Short: "Delete bootstrap tokens",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := clientFor(kc())
			if err != nil {
				return err
			}
			for _, a := range args {
				if err := token.Delete(cmd.Context(), c, a); err != nil {
					return err
				}
				fmt.Fprintf(out, "bootstrap token %q deleted\n", strings.SplitN(a, ".", 2)[0])
			}
			return nil
		},
	}
	cmd.AddCommand(create, list, del)
	return cmd
}

func newCertsCommand(g *global, out io.Writer) *cobra.Command {
	var certDir string
	cmd := &cobra.Command{Use: "certs", Short: "Inspect and renew the cluster's certificates"}
	check := &cobra.Command{
		Use:   "check-expiration",
		Short: "Print when each certificate and kubeconfig client certificate expires",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p := paths.Paths{Root: g.root}
			// The names do not depend on the node; any inputs list them all.
			specs, err := pki.Specs(pki.Inputs{ServiceSubnet: v1alpha1.DefaultServiceSubnet})
			if err != nil {
				return err
			}
			leaves, cas, err := expiration.Collect(p.In(certDir), specs, p.ConfigDir(), reset.Kubeconfigs)
			if err != nil {
				return err
			}
			if len(leaves)+len(cas) == 0 {
				return fmt.Errorf("no certificates in %s", p.In(certDir))
			}
			expiration.Print(out, leaves, cas, time.Now())
			return nil
		},
	}
	check.Flags().StringVar(&certDir, "cert-dir", v1alpha1.DefaultCertificatesDir, "The certificates directory.")
	key := &cobra.Command{
		Use:   "certificate-key",
		Short: "Print a new random certificate key for `init --upload-certs --certificate-key`",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			k, err := copycerts.CreateKey()
			if err != nil {
				return err
			}
			fmt.Fprintln(out, k)
			return nil
		},
	}
	cmd.AddCommand(check, key, newCertsRenewCommand(g, out))
	return cmd
}

// restartTimeout bounds the wait for one restarted static pod: as long as
// wait-control-plane gives the whole control plane.
const restartTimeout = controlPlaneTimeout

// renewCertificates renews the certificates and kubeconfigs name selects
// (all, or one as check-expiration names it) and returns the static pods that
// load them.
func renewCertificates(p paths.Paths, certDir, name string, out io.Writer) (map[string]bool, error) {
	specs, err := pki.Specs(pki.Inputs{ServiceSubnet: v1alpha1.DefaultServiceSubnet})
	if err != nil {
		return nil, err
	}
	targets, err := renew.Select(renew.Targets(specs), name)
	if err != nil {
		return nil, err
	}
	dirs := renew.Dirs{PKI: p.In(certDir), Config: p.ConfigDir()}
	now := time.Now()
	restartSet := map[string]bool{}
	renewed := 0
	for _, t := range targets {
		notAfter, err := renew.Renew(dirs, t, now)
		if errors.Is(err, renew.ErrMissing) && len(targets) > 1 {
			continue
		}
		if err != nil {
			return nil, err
		}
		renewed++
		fmt.Fprintf(out, "[certs] %s renewed, expires %s\n", t.Name, notAfter.UTC().Format("Jan 02, 2006 15:04 MST"))
		for _, u := range t.Users {
			restartSet[u] = true
		}
	}
	if renewed == 0 {
		return nil, fmt.Errorf("no certificate to renew in %s or %s", dirs.PKI, dirs.Config)
	}
	return restartSet, nil
}

func newCertsRenewCommand(g *global, out io.Writer) *cobra.Command {
	var (
		certDir string
		restart bool
	)
	cmd := &cobra.Command{
		Use:   "renew all|NAME",
		Short: "Renew the certificates and kubeconfigs with their CA and restart the static pods that use them",
		Long: "Renew every certificate (all) or one (NAME, as check-expiration names it) with the CA that signed it, keeping\n" +
			"its subject, SANs and usages, and every kubeconfig's client certificate except kubelet.conf's (the kubelet\n" +
			"rotates its own). Then the static pods that load them are restarted one at a time, each waited for until it\n" +
			"serves. On an HA control plane, run it on one control-plane node at a time.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := paths.Paths{Root: g.root}
			restartSet, err := renewCertificates(p, certDir, args[0], out)
			if err != nil {
				return err
			}
			if !restart {
				fmt.Fprintln(out, "\nRestart the static pods that use them (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, ...) so that they load them.")
				return nil
			}
			for _, c := range staticpod.RestartOrder {
				if !restartSet[c] {
					continue
				}
				since := time.Now()
				pod, err := staticpod.Restart(p.ManifestsDir(), c, since)
				if err != nil {
					return err
				}
				if pod == nil {
					continue
				}
				fmt.Fprintf(out, "[certs] restarting %s ...\n", c)
				if err := staticpod.WaitRestarted(cmd.Context(), p.ContainerdSocket(), pod, since, restartTimeout); err != nil {
					return fmt.Errorf("restart %s: %w (the certificates are renewed; see `crictl ps -a --name %s`)", c, err, c)
				}
				fmt.Fprintf(out, "[certs] %s restarted and healthy after %s\n", c, time.Since(since).Round(100*time.Millisecond))
			}
			fmt.Fprintln(out, "\nCertificates renewed; `triremeadm certs check-expiration` shows the new dates. On an HA control plane, renew on the next control-plane node now.")
			return nil
		},
	}
	cmd.Flags().StringVar(&certDir, "cert-dir", v1alpha1.DefaultCertificatesDir, "The certificates directory.")
	cmd.Flags().BoolVar(&restart, "restart", true, "Restart the static pods that load the renewed certificates, one at a time.")
	return cmd
}

func newImagesCommand(g *global, out io.Writer) *cobra.Command {
	var repo, ver, dir, socket string
	cmd := &cobra.Command{Use: "images", Short: "List and import the images a version needs"}
	list := &cobra.Command{
		Use:   "list",
		Short: "Print the images a version needs",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			for _, r := range images.List(repo, ver) {
				fmt.Fprintln(out, r)
			}
		},
	}
	list.Flags().StringVar(&repo, "image-repository", v1alpha1.DefaultImageRepository, "The repository prefix.")
	list.Flags().StringVar(&ver, "kubernetes-version", version.Version, "The version.")
	imp := &cobra.Command{
		Use:   "import",
		Short: "Load image archives into containerd's k8s.io namespace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			archives, err := images.Archives(dir)
			if err != nil {
				return err
			}
			if socket == "" {
				socket = paths.Paths{Root: g.root}.ContainerdSocket()
			}
			refs, err := images.Import(cmd.Context(), socket, archives)
			for _, r := range refs {
				fmt.Fprintf(out, "imported %s\n", r)
			}
			return err
		},
	}
	imp.Flags().StringVar(&dir, "dir", "_output/images", "The directory of image archives (*.tar).")
	imp.Flags().StringVar(&socket, "containerd-socket", "", "containerd's socket; default /run/containerd/containerd.sock.")
	cmd.AddCommand(list, imp)
	return cmd
}

func newSuperviseCommand() *cobra.Command {
	var name, pidFile string
	cmd := &cobra.Command{
		Use:    supervisor.Marker + " --name NAME --pid-file FILE -- COMMAND...",
		Short:  "Run and restart a command, recording this process's PID (started by init)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return supervisor.Run(name, pidFile, args, os.Stdout, 20*time.Second)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "The supervised program's name.")
	cmd.Flags().StringVar(&pidFile, "pid-file", "", "Where to record this process's PID.")
	return cmd
}

func newEtcdCommand(g *global, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "etcd", Short: "Back up, restore and defragment the cluster's etcd"}
	snap := &cobra.Command{Use: "snapshot", Short: "Save, inspect and restore etcd snapshots"}
	member := func() (etcdsnapshot.Member, error) {
		return etcdsnapshot.LocalMember(paths.Paths{Root: g.root}.ManifestsDir())
	}
	save := &cobra.Command{
		Use:   "save FILE",
		Short: "Write a snapshot of the local etcd member to FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			m, err := member()
			if err != nil {
				return err
			}
			start := time.Now()
			fmt.Fprintf(out, "[etcd] Saving a snapshot of %s to %s ...\n", m.Endpoint, args[0])
			s, err := etcdsnapshot.Save(c.Context(), m, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "[etcd] Saved revision %d: %d keys, %.1f MiB, in %s\n", s.Revision, s.Keys, float64(s.Bytes)/(1<<20), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	status := &cobra.Command{
		Use:   "status FILE",
		Short: "Print a snapshot's revision, keys, size and hash",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := etcdsnapshot.Read(args[0])
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "HASH\tREVISION\tTOTAL KEYS\tTOTAL SIZE\tVERSION")
			fmt.Fprintf(w, "%08x\t%d\t%d\t%.1f MiB\t%s\n", s.Hash, s.Revision, s.Keys, float64(s.Bytes)/(1<<20), s.Version)
			return w.Flush()
		},
	}
	var dataDir string
	restore := &cobra.Command{
		Use:   "restore FILE",
		Short: "Build a new data directory for the local etcd member from a snapshot",
		Long: "Build a new data directory for the local etcd member from a snapshot. The running member is not touched:\n" +
			"to switch to the restored data, move the etcd manifest out of the manifests directory, swap the data\n" +
			"directories, and move the manifest back (the command prints the steps).",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			m, err := member()
			if err != nil {
				return err
			}
			dir := dataDir
			if dir == "" {
				dir = m.DataDir + ".restored-" + time.Now().UTC().Format("20060102T150405")
			}
			if err := etcdsnapshot.Restore(args[0], dir, m); err != nil {
				return err
			}
			manifests := paths.Paths{Root: g.root}.ManifestsDir()
			fmt.Fprintf(out, "[etcd] Restored %s into %s for member %s. To run the member on it:\n", args[0], dir, m.Name)
			fmt.Fprintf(out, "  mv %s/etcd.yaml /tmp/ && sleep 20   # the kubelet stops etcd\n", manifests)
			fmt.Fprintf(out, "  mv %s %s.old && mv %s %s\n", m.DataDir, m.DataDir, dir, m.DataDir)
			fmt.Fprintf(out, "  mv /tmp/etcd.yaml %s/            # the kubelet starts etcd on the restored data\n", manifests)
			return nil
		},
	}
	restore.Flags().StringVar(&dataDir, "data-dir", "", "Directory to create for the restored member (default: the member's data directory with a .restored-<time> suffix).")
	var listDir string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the scheduled snapshots (the etcd-snapshot static pod's), oldest first",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p := paths.Paths{Root: g.root}
			dir := listDir
			if dir == "" {
				dir = scheduledSnapshotDir(p)
			}
			entries, err := etcdsnapshot.List(dir)
			if err != nil {
				return err
			}
			if len(entries) == 0 {
				fmt.Fprintf(out, "No scheduled snapshots in %s.\n", dir)
				return nil
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tNODE\tTAKEN\tAGE\tSIZE")
			for _, e := range entries {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.1f MiB\n", e.Path, e.Node, e.Taken.Format(time.RFC3339), time.Since(e.Taken).Round(time.Minute), float64(e.Bytes)/(1<<20))
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&listDir, "dir", "", "The snapshots directory (default: the etcd-snapshot static pod's, else "+v1alpha1.DefaultEtcdSnapshotDir+").")
	snap.AddCommand(save, status, restore, list)
	cmd.AddCommand(snap, newEtcdDefragCommand(g, out))
	return cmd
}

// scheduledSnapshotDir is the etcd-snapshot static pod's --dir, or the
// default directory when the pod is not there.
func scheduledSnapshotDir(p paths.Paths) string {
	if pod, err := staticpod.Read(staticpod.Path(p.ManifestsDir(), staticpod.EtcdSnapshot)); err == nil && len(pod.Spec.Containers) > 0 {
		if dir, ok := staticpod.Flag(pod.Spec.Containers[0].Command, "dir"); ok {
			return dir
		}
	}
	return p.In(v1alpha1.DefaultEtcdSnapshotDir)
}

// defragTimeout bounds one member's defragmentation, which blocks it: a
// database of the 8 GB quota takes about a minute.
const defragTimeout = 5 * time.Minute

func newEtcdDefragCommand(g *global, out io.Writer) *cobra.Command {
	var (
		certDir string
		disarm  bool
	)
	cmd := &cobra.Command{
		Use:   "defrag [--disarm]",
		Short: "Defragment every etcd member, one at a time (the leader last); --disarm recovers from NOSPACE",
		Long: "Defragment every voting etcd member, one at a time and the leader last, waiting after each until it answers:\n" +
			"a member serves nothing while it defragments. With --disarm, first compact to the current revision (the\n" +
			"apiserver compacts only what is 5 minutes old), then defragment, then clear the NOSPACE alarms that stop\n" +
			"writes once a member's database reached --quota-backend-bytes.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := paths.Paths{Root: g.root}
			m, err := etcdsnapshot.LocalMember(p.ManifestsDir())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			c, err := etcdmember.New([]string{m.Endpoint}, p.In(certDir))
			if err != nil {
				return err
			}
			defer c.Close()
			if disarm {
				alarms, err := c.Alarms(ctx)
				if err != nil {
					return err
				}
				for _, a := range alarms {
					fmt.Fprintf(out, "[etcd] alarm %s on member %x\n", a.Alarm, a.MemberID)
				}
				rev, err := c.CompactAll(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "[etcd] compacted to revision %d\n", rev)
			}
			err = c.Defragment(ctx, defragTimeout, func(r etcdmember.DefragResult) {
				fmt.Fprintf(out, "[etcd] defragmented %s (%s): %.1f MiB -> %.1f MiB (%.1f MiB in use before) in %s\n", r.Member.Name, r.Member.ClientURLs[0],
					float64(r.Before)/(1<<20), float64(r.After)/(1<<20), float64(r.InUse)/(1<<20), r.Took.Round(time.Millisecond))
			})
			if err != nil {
				return err
			}
			if disarm {
				n, err := c.DisarmNoSpace(ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "[etcd] cleared %d NOSPACE alarm(s): writes are accepted again\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&certDir, "cert-dir", v1alpha1.DefaultCertificatesDir, "The certificates directory (the etcd CA and healthcheck client certificate).")
	cmd.Flags().BoolVar(&disarm, "disarm", false, "Compact to the current revision first and clear NOSPACE alarms after defragmenting.")
	return cmd
}
