package etcdsnapshot

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"trireme.dev/componentbase/command"
	"trireme.dev/componentbase/logging"
)

// scheduleOptions are trireme-etcd-snapshot's command line.
type scheduleOptions struct {
	s         Schedule
	retention int
	logging.Settings
}

func (o *scheduleOptions) addFlags(fs *pflag.FlagSet) {
	m := &o.s.Member
	fs.StringVar(&m.Endpoint, "endpoint", "https://127.0.0.1:2379", "The local member's client URL.")
	fs.StringVar(&m.CAFile, "cacert", "", "The etcd CA.")
	fs.StringVar(&m.CertFile, "cert", "", "The client certificate (etcd's healthcheck client).")
	fs.StringVar(&m.KeyFile, "key", "", "Its key.")
	fs.StringVar(&o.s.Dir, "dir", "", "Where snapshots are written.")
	fs.StringVar(&o.s.Node, "node-name", "", "This node's name, in the snapshots' names.")
	fs.DurationVar(&o.s.Interval, "interval", 12*time.Hour, "The time between snapshots.")
	fs.IntVar(&o.retention, "retention", 5, "How many of this node's snapshots are kept.")
	o.Settings.AddFlags(fs)
	for _, name := range []string{"cacert", "cert", "key", "dir", "node-name"} {
		_ = cobra.MarkFlagRequired(fs, name)
	}
}

var scheduleSpec = command.Spec[*scheduleOptions]{
	Name:       "trireme-etcd-snapshot",
	Short:      "Snapshot the local etcd member on a schedule and keep the newest few (triremeadm's etcd-snapshot static pod)",
	NewOptions: func() *scheduleOptions { return &scheduleOptions{Settings: logging.Defaults("json")} },
	AddFlags:   (*scheduleOptions).addFlags,
	Logging:    func(o *scheduleOptions) logging.Settings { return o.Settings },
	Run:        runSchedule,
}

// RunSchedule parses args and takes snapshots until ctx ends.
func RunSchedule(ctx context.Context, args []string, streams command.Streams) error {
	return scheduleSpec.Execute(ctx, args, streams)
}

func runSchedule(ctx context.Context, o *scheduleOptions) error {
	log := logr.FromContextOrDiscard(ctx)
	if o.s.Interval < time.Minute || o.retention < 1 {
		return errors.New("--interval must be at least 1m and --retention at least 1")
	}
	o.s.Retention = o.retention
	log.Info("Taking snapshots", "endpoint", o.s.Member.Endpoint, "dir", o.s.Dir, "interval", o.s.Interval, "retention", o.s.Retention)
	return o.s.Run(ctx, log)
}
