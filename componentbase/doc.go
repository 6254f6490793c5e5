// Package componentbase holds the plumbing every Trireme component shares and
// that is not API: logging set-up, idle memory trimming and the removal of
// pods' cgroups. Components import its packages and the api module, never
// each other.
package componentbase
