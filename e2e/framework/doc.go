// Package framework holds what end-to-end suites need beyond a control
// plane (package trireme.dev/componentbase/testcluster starts that): a
// containerd of the test's own for the kubelet suites, and the removal of
// the cgroups pods leave behind.
package framework
