// Package pause is the pod sandbox's init process: it holds the pod's namespaces open by
// doing nothing, reaps orphans re-parented to it as PID 1 of a shared PID namespace, and
// exits 0 when the runtime asks it to stop.
package pause
