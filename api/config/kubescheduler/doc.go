// Package kubescheduler installs, defaults and validates upstream's
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), so that a
// kube-scheduler configuration file works unchanged with trireme-scheduler.
package kubescheduler
