// Package framework starts Trireme components as real processes for
// end-to-end suites and stops them by PID when done.
package framework
