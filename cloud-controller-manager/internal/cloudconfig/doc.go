// Package cloudconfig reads the provider's --cloud-config file, a
// CloudConfiguration (trireme.dev/api/config/cloudconfig), and keeps it
// current: Decode names the line of whatever is wrong in a file, and a
// Watcher re-reads the file when it changes, keeping the last good
// configuration when the new one is bad.
package cloudconfig
