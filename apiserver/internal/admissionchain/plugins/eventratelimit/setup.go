// Package eventratelimit is the EventRateLimit admission plugin: it caps
// the rate of Event writes per server, namespace, user, or event source
// and object, so a crash-looping component cannot flood etcd with Events.
// Its configuration (kind Configuration,
// eventratelimit.admission.k8s.io/v1alpha1) is required, as upstream:
//
//	limits:
//	- type: Namespace
//	  qps: 50
//	  burst: 100
//	  cacheSize: 2000
package eventratelimit

import (
	"errors"
	"fmt"
	"io"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "EventRateLimit"

// Register adds EventRateLimit to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(r io.Reader) (admission.Interface, error) {
		cfg, err := readConfig(r)
		if err != nil {
			return nil, err
		}
		return newPlugin(cfg, clock.RealClock{})
	})
}

// LimitType is what one limit's buckets are keyed by.
type LimitType string

// The limit types upstream defines.
const (
	Server          LimitType = "Server"
	Namespace       LimitType = "Namespace"
	User            LimitType = "User"
	SourceAndObject LimitType = "SourceAndObject"
)

// Limit is one rate limit of the configuration.
type Limit struct {
	Type      LimitType `json:"type"`
	QPS       int32     `json:"qps"`
	Burst     int32     `json:"burst"`
	CacheSize int32     `json:"cacheSize,omitempty"`
}

type config struct {
	Limits []Limit `json:"limits"`
}

// defaultCacheSize bounds the buckets a keyed limit keeps, as upstream.
const defaultCacheSize = 4096

func readConfig(r io.Reader) (*config, error) {
	if r == nil {
		return nil, errors.New("EventRateLimit requires a configuration in --admission-control-config-file")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read EventRateLimit configuration: %w", err)
	}
	cfg := &config{}
	if err := yaml.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("parse EventRateLimit configuration: %w", err)
	}
	if len(cfg.Limits) == 0 {
		return nil, errors.New("EventRateLimit configuration: limits: Required value: must not be empty")
	}
	for i, l := range cfg.Limits {
		switch l.Type {
		case Server, Namespace, User, SourceAndObject:
		default:
			return nil, fmt.Errorf("EventRateLimit configuration: limits[%d].type: Unsupported value: %q", i, l.Type)
		}
		if l.QPS <= 0 || l.Burst <= 0 {
			return nil, fmt.Errorf("EventRateLimit configuration: limits[%d]: qps and burst must be positive", i)
		}
		if l.CacheSize < 0 {
			return nil, fmt.Errorf("EventRateLimit configuration: limits[%d].cacheSize: must not be negative", i)
		}
		if l.CacheSize == 0 {
			cfg.Limits[i].CacheSize = defaultCacheSize
		}
	}
	return cfg, nil
}
