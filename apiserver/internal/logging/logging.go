// Package logging sets up the component's logger: zap underneath, logr on
// top, and klog routed into it so library logs share one format.
package logging

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

// New builds a logger in format "text" or "json" at verbosity v and routes
// klog to it.
func New(format string, v int) (logr.Logger, *zap.Logger, error) {
	var cfg zap.Config
	switch format {
	case "json":
		cfg = zap.NewProductionConfig()
		cfg.Sampling = nil
	case "text", "":
		cfg = zap.NewDevelopmentConfig()
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
		cfg.Development = false
		cfg.DisableStacktrace = true
	default:
		return logr.Logger{}, nil, fmt.Errorf("unknown log format %q: want text or json", format)
	}
	// logr's V(n) is zap level -n.
	cfg.Level = zap.NewAtomicLevelAt(zapcore.Level(-v))
	cfg.EncoderConfig.TimeKey = "ts"
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	z, err := cfg.Build()
	if err != nil {
		return logr.Logger{}, nil, fmt.Errorf("build logger: %w", err)
	}
	log := zapr.NewLogger(z)
	klog.SetLogger(log)
	return log, z, nil
}
