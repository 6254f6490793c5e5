// Package leaderelection runs a component's work only while it holds a
// Lease, so that of several replicas one works at a time: one identity
// format, one set of flags (upstream's --leader-elect-*), one way to run.
package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"
)

// ErrLeadershipLost is returned by Run when another process took the Lease:
// the work has stopped and the process should exit so that it restarts as
// a fresh candidate, as upstream's components do.
var ErrLeadershipLost = errors.New("leader election lost")

// Identity returns this process's name in a Lease: the hostname, then a
// random UUID that tells apart two processes on one host.
func Identity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// AddFlags registers upstream's --leader-elect-* flags on fs, bound to le.
// what says what the Lease guards, for --leader-elect's help ("running
// controllers").
func AddFlags(fs *pflag.FlagSet, le *componentbaseconfig.LeaderElectionConfiguration, what string) {
	if le.LeaderElect == nil {
		le.LeaderElect = new(bool)
	}
	fs.BoolVar(le.LeaderElect, "leader-elect", *le.LeaderElect, "Hold a leader election Lease before "+what+", so that only one replica of several works at a time.")
	fs.DurationVar(&le.LeaseDuration.Duration, "leader-elect-lease-duration", le.LeaseDuration.Duration, "How long other candidates wait after the last renewal before taking the Lease over.")
	fs.DurationVar(&le.RenewDeadline.Duration, "leader-elect-renew-deadline", le.RenewDeadline.Duration, "How long the leader keeps retrying a renewal before it gives up leading.")
	fs.DurationVar(&le.RetryPeriod.Duration, "leader-elect-retry-period", le.RetryPeriod.Duration, "How long candidates wait between attempts to acquire or renew the Lease.")
	fs.StringVar(&le.ResourceLock, "leader-elect-resource-lock", le.ResourceLock, "Kind of lock object; only 'leases' is supported.")
	fs.StringVar(&le.ResourceName, "leader-elect-resource-name", le.ResourceName, "Name of the leader election Lease.")
	fs.StringVar(&le.ResourceNamespace, "leader-elect-resource-namespace", le.ResourceNamespace, "Namespace of the leader election Lease.")
}

// Validate reports what client-go would refuse at start, naming the flags;
// with --leader-elect off nothing is checked.
func Validate(le componentbaseconfig.LeaderElectionConfiguration) []error {
	if le.LeaderElect == nil || !*le.LeaderElect {
		return nil
	}
	var errs []error
	if le.ResourceLock != "leases" {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-lock %q: only leases is supported", le.ResourceLock))
	}
	if le.ResourceName == "" || le.ResourceNamespace == "" {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-name and --leader-elect-resource-namespace must not be empty"))
	}
	if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
		errs = append(errs, fmt.Errorf("--leader-elect-lease-duration (%v) must be greater than --leader-elect-renew-deadline (%v)", le.LeaseDuration.Duration, le.RenewDeadline.Duration))
	}
	if le.RetryPeriod.Duration <= 0 || float64(le.RenewDeadline.Duration) <= 1.2*float64(le.RetryPeriod.Duration) {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%v) must be greater than 1.2 x --leader-elect-retry-period (%v)", le.RenewDeadline.Duration, le.RetryPeriod.Duration))
	}
	return errs
}

// Config is one candidate in an election.
type Config struct {
	// Lease names the Lease (ResourceNamespace/ResourceName) and holds the
	// timings; LeaderElect and ResourceLock are the caller's to check.
	Lease componentbaseconfig.LeaderElectionConfiguration
	// Identity is this candidate's name in the Lease (Identity(), unless
	// the holder's name means something to others, as the VIP manager's
	// node name does).
	Identity string
	// Client writes the Lease; give it a timeout under the renew deadline
	// so that a stuck request cannot outlive it.
	Client kubernetes.Interface
	// Watchdog, when set, fails once the leader has not renewed for its
	// timeout; serve it as a health check.
	Watchdog *leaderelection.HealthzAdaptor
	// Leading, when set, is told true as this candidate starts leading and
	// false whenever an election ends, led or not (a metric, a release).
	Leading func(bool)
}

// Run takes part in the election until ctx ends, running work while this
// candidate leads; work must return once its context ends. It returns
// nil when ctx ended or work returned nil by itself, work's error when work
// failed, ErrLeadershipLost when another candidate took the Lease. The
// Lease is released on a clean stop, and when work ends, so that the next
// candidate takes over at once instead of waiting it out.
func Run(ctx context.Context, cfg Config, work func(context.Context) error) error {
	log := logr.FromContextOrDiscard(ctx)
	le := cfg.Lease
	lease := le.ResourceNamespace + "/" + le.ResourceName
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.ResourceNamespace, Name: le.ResourceName},
		Client:     cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}
	leading := cfg.Leading
	if leading == nil {
		leading = func(bool) {}
	}
	ran := make(chan error, 1)
	started := make(chan struct{})
	// A leader whose work has ended must not keep the Lease from the
	// others: stopping the elector releases it.
	electing, stopElecting := context.WithCancel(ctx)
	defer stopElecting()
	var quit atomic.Bool
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration.Duration,
		RenewDeadline:   le.RenewDeadline.Duration,
		RetryPeriod:     le.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		WatchDog:        cfg.Watchdog,
		Name:            le.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				log.Info("Leading", "lease", lease, "identity", cfg.Identity)
				leading(true)
				close(started)
				err := work(ctx)
				if ctx.Err() == nil {
					quit.Store(true)
					stopElecting()
				}
				ran <- err
			},
			OnStoppedLeading: func() { leading(false) },
			OnNewLeader: func(identity string) {
				if identity != cfg.Identity {
					log.Info("Another process leads", "lease", lease, "identity", identity)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	log.Info("Waiting for the leader election Lease", "lease", lease, "identity", cfg.Identity)
	elector.Run(electing)
	select {
	case <-started:
		// The elector returns as soon as leadership ends; the work stops on
		// its own context, so wait for it before returning.
		if err := <-ran; err != nil {
			return err
		}
	default:
		// Never led: ctx ended while waiting.
	}
	if ctx.Err() != nil || quit.Load() {
		return nil
	}
	return ErrLeadershipLost
}

// Lead runs a component's work as its --leader-elect says: at once when it
// is off, else under Run while this process holds the Lease. cfg.Leading is
// told true as work starts and false as it ends, either way. A cfg without
// Client gets one made from restCfg (user agent userAgent/leader-election),
// and one without Identity gets Identity().
func Lead(ctx context.Context, restCfg *rest.Config, userAgent string, cfg Config, work func(context.Context) error) error {
	leading := cfg.Leading
	if leading == nil {
		leading = func(bool) {}
	}
	if cfg.Lease.LeaderElect == nil || !*cfg.Lease.LeaderElect {
		leading(true)
		defer leading(false)
		return work(ctx)
	}
	if cfg.Client == nil {
		client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(restCfg), userAgent+"/leader-election"))
		if err != nil {
			return fmt.Errorf("leader election client: %w", err)
		}
		cfg.Client = client
	}
	if cfg.Identity == "" {
		id, err := Identity()
		if err != nil {
			return err
		}
		cfg.Identity = id
	}
	return Run(ctx, cfg, work)
}

// NewGauge returns the <namespace>_<subsystem>_leader gauge, for a Config's
// Leading (SetGauge) and the component's registry.
func NewGauge(namespace, subsystem string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "leader",
		Help: "1 while this process holds the leader election Lease (or runs without leader election).",
	})
}

// SetGauge returns a Config's Leading that sets g to 1 while leading, else 0.
func SetGauge(g prometheus.Gauge) func(bool) {
	return func(on bool) {
		if on {
			g.Set(1)
		} else {
			g.Set(0)
		}
	}
}
