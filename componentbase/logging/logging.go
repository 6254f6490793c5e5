// Package logging sets up a Trireme component's logger: zap underneath, logr
// on top, and klog routed into it so that client-go's and the libraries' logs
// share the component's format.
package logging

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// Settings are a component's --log-format and -v. Components embed them in
// their options, so that every binary spells, checks and applies them the
// same way.
type Settings struct {
	// LogFormat is "text" (for a person at a terminal) or "json" (for a
	// log collector).
	LogFormat string
	// Verbosity is -v: 0 logs what an operator needs, 2 each object's
	// sync, 4 and up what debugging needs.
	Verbosity int
}

// Defaults returns Settings logging in format at verbosity 0.
func Defaults(format string) Settings {
	return Settings{LogFormat: format}
}

// AddFlags binds --log-format and -v to s.
func (s *Settings) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.LogFormat, "log-format", s.LogFormat, "Log format: text or json.")
	fs.IntVarP(&s.Verbosity, "v", "v", s.Verbosity, "Log verbosity: 0 for what an operator needs, 2 for per-object detail, 4 for debugging.")
}

// Validate reports a format or verbosity that Logger would refuse, naming
// the flag.
func (s Settings) Validate() []error {
	var errs []error
	if s.LogFormat != "text" && s.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", s.LogFormat))
	}
	if s.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("-v %d: must be 0 or more", s.Verbosity))
	}
	return errs
}

// Logger builds the logger s describes, as New does.
func (s Settings) Logger() (logr.Logger, func(), error) {
	return New(s.LogFormat, s.Verbosity)
}

// New builds a logger in format "text" or "json" at verbosity v, routes klog
// to it, and returns a flush function to call before exit.
func New(format string, v int) (logr.Logger, func(), error) {
	z, err := Zap(format, v)
	if err != nil {
		return logr.Logger{}, nil, err
	}
	return FromZap(z), func() { _ = z.Sync() }, nil
}

// Zap builds the zap logger New puts underneath, for the libraries that take
// one directly (embedded etcd); FromZap puts logr on top of it.
func Zap(format string, v int) (*zap.Logger, error) {
	var cfg zap.Config
	switch format {
	case "json":
		cfg = zap.NewProductionConfig()
		// Sampling drops repeated lines; an operator reading a failure wants
		// every one of them.
		cfg.Sampling = nil
	case "text", "":
		cfg = zap.NewDevelopmentConfig()
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
		cfg.Development = false
		cfg.DisableStacktrace = true
	default:
		return nil, fmt.Errorf("unknown log format %q: want text or json", format)
	}
	if v < 0 {
		return nil, fmt.Errorf("verbosity %d: must be 0 or more", v)
	}
	// logr's V(n) is zap level -n.
	cfg.Level = zap.NewAtomicLevelAt(zapcore.Level(-v))
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	z, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("build logger: %w", err)
	}
	return z, nil
}

// FromZap returns a logr.Logger writing to z and routes klog to it.
func FromZap(z *zap.Logger) logr.Logger {
	log := zapr.NewLogger(z)
	klog.SetLogger(log)
	return log
}
