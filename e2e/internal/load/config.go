package load

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Verbs are the operations the driver can measure, in the order it runs
// them: later verbs work on what create made.
var Verbs = []string{"create", "get", "list", "update", "patch", "watch"}

// Kinds are the resources the verbs can be run against.
var Kinds = []string{"configmaps", protobufConfigMapKind, "pods", customResourceKind, unstructuredCRKind}

// Config says what to measure and against which server.
type Config struct {
	Kubeconfig string // the only source of server address and credentials
	Context    string // kubeconfig context; empty means current
	Protobuf   bool   // ask for protobuf, as controllers do, instead of JSON

	Clients   int           // concurrent clients, each on its own connection
	Duration  time.Duration // how long each verb runs per kind, unless Count is set
	Count     int           // operations per verb per kind across all clients
	Namespace string        // empty: a fresh apiload-xxxxx namespace
	Verbs     []string
	Kinds     []string
	ListLimit int64 // page size of the list verb
	// ListObjects is how many objects of a kind the list verb runs over:
	// created or deleted, untimed, before it starts, so every kind lists
	// the same number whatever its create rate (0: as many as there are).
	ListObjects int

	ListSize int // pods to pre-create for the full-list measurement; 0 skips it
	ListRuns int // timed full lists per mode

	RBACObjects int // Roles and as many RoleBindings to load into the run's namespace first

	Watchers     int           // concurrent watchers for the fan-out check; 0 skips it
	WatchEvents  int           // events every watcher must see
	WatchTimeout time.Duration // how long watchers may take to see them all

	DiscoveryCRDs int // CRDs to install before timing full discovery; 0 skips it
	DiscoveryRuns int // timed discoveries per mode

	ServerPID int           // server process whose memory to report; 0 skips it
	WaitReady time.Duration // wait this long for /readyz before starting
	Idle      time.Duration // then sit idle this long and report memory
}

// DefaultConfig returns the defaults the flags start from.
func DefaultConfig() Config {
	return Config{
		Clients:       100,
		Duration:      20 * time.Second,
		Verbs:         slices.Clone(Verbs),
		Kinds:         []string{"configmaps"},
		ListLimit:     500,
		ListObjects:   20000,
		ListRuns:      3,
		WatchEvents:   100,
		WatchTimeout:  60 * time.Second,
		DiscoveryRuns: 30,
	}
}

// AddFlags binds c's fields to flags on fs, keeping c's values as defaults.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "kubeconfig of the server to measure (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&c.Context, "context", c.Context, "kubeconfig context to use")
	fs.BoolVar(&c.Protobuf, "protobuf", c.Protobuf, "use protobuf instead of JSON")
	fs.IntVar(&c.Clients, "clients", c.Clients, "concurrent clients, each with its own connection")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "how long each verb runs per kind")
	fs.IntVar(&c.Count, "count", c.Count, "operations per verb per kind across all clients (overrides --duration)")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "namespace to work in (default: a new apiload-xxxxx namespace, deleted afterwards)")
	fs.Var(listFlag{&c.Verbs}, "verbs", "comma-separated verbs: "+strings.Join(Verbs, ","))
	fs.Var(listFlag{&c.Kinds}, "kinds", "comma-separated kinds: "+strings.Join(Kinds, ","))
	fs.Int64Var(&c.ListLimit, "list-limit", c.ListLimit, "page size of the list verb")
	fs.IntVar(&c.ListObjects, "list-objects", c.ListObjects, "objects of a kind the list verb runs over, created or deleted untimed before it (0: as many as the verbs before it left)")
	fs.IntVar(&c.ListSize, "list-size", c.ListSize, "pods to pre-create before timing full lists of them (0: skip)")
	fs.IntVar(&c.ListRuns, "list-runs", c.ListRuns, "timed full lists per mode")
	fs.IntVar(&c.RBACObjects, "rbac-objects", c.RBACObjects, "Roles and RoleBindings to create in the run's namespace before measuring, so every request's authorization sees them (0: none)")
	fs.IntVar(&c.Watchers, "watchers", c.Watchers, "concurrent watchers that must each see every event (0: skip)")
	fs.IntVar(&c.WatchEvents, "watch-events", c.WatchEvents, "events each watcher must see")
	fs.DurationVar(&c.WatchTimeout, "watch-timeout", c.WatchTimeout, "how long watchers may take to see every event")
	fs.IntVar(&c.DiscoveryCRDs, "discovery-crds", c.DiscoveryCRDs, "CRDs to install before timing full discovery (0: skip)")
	fs.IntVar(&c.DiscoveryRuns, "discovery-runs", c.DiscoveryRuns, "timed full discoveries per mode (aggregated, legacy)")
	fs.IntVar(&c.ServerPID, "server-pid", c.ServerPID, "PID of a local server to report VmRSS and VmHWM of (0: skip)")
	fs.DurationVar(&c.WaitReady, "wait-ready", c.WaitReady, "wait up to this long for /readyz before starting")
	fs.DurationVar(&c.Idle, "idle", c.Idle, "after ready, stay idle this long and report the server's memory")
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	var errs []error
	if c.Clients < 1 {
		errs = append(errs, fmt.Errorf("--clients must be at least 1, got %d", c.Clients))
	}
	if c.Count < 0 || (c.Count == 0 && c.Duration <= 0) {
		errs = append(errs, errors.New("set a positive --duration or --count"))
	}
	for _, v := range c.Verbs {
		if !slices.Contains(Verbs, v) {
			errs = append(errs, fmt.Errorf("unknown verb %q (known: %s)", v, strings.Join(Verbs, ",")))
		}
	}
	for _, k := range c.Kinds {
		if !slices.Contains(Kinds, k) {
			errs = append(errs, fmt.Errorf("unknown kind %q (known: %s)", k, strings.Join(Kinds, ",")))
		}
	}
	if c.ListLimit < 0 || c.ListObjects < 0 || c.ListSize < 0 || c.Watchers < 0 || c.RBACObjects < 0 || c.DiscoveryCRDs < 0 {
		errs = append(errs, errors.New("--list-limit, --list-size, --watchers, --rbac-objects and --discovery-crds must not be negative"))
	}
	if c.DiscoveryCRDs > 0 && c.DiscoveryRuns < 1 {
		errs = append(errs, errors.New("--discovery-runs must be at least 1"))
	}
	if c.ListSize > 0 && c.ListRuns < 1 {
		errs = append(errs, errors.New("--list-runs must be at least 1"))
	}
	if c.Watchers > 0 && (c.WatchEvents < 1 || c.WatchTimeout <= 0) {
		errs = append(errs, errors.New("--watch-events and --watch-timeout must be positive"))
	}
	return errors.Join(errs...)
}

// listFlag is a comma-separated list flag that replaces its default.
type listFlag struct{ items *[]string }

func (l listFlag) String() string {
	if l.items == nil {
		return ""
	}
	return strings.Join(*l.items, ",")
}

func (l listFlag) Set(v string) error {
	*l.items = nil
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l.items = append(*l.items, item)
		}
	}
	return nil
}
