module trireme.dev/componentbase

go 1.26.0

require (
	github.com/go-logr/logr v1.4.3
	github.com/go-logr/zapr v1.3.0
	go.uber.org/zap v1.27.1
	golang.org/x/sys v0.47.0
	k8s.io/klog/v2 v2.140.0
)

require go.uber.org/multierr v1.10.0 // indirect
