// Package ext stands in for Traefik's nested module
// github.com/traefik/traefik/dynamic/ext, which Traefik's go.mod replaces
// with a local directory that its module zip does not carry. Traefik's
// dynamic configuration embeds these two types inline, for extensions that
// its open-source build leaves empty; they declare nothing more.
package ext

// HTTP is embedded inline in Traefik's dynamic HTTP configuration.
type HTTP struct{}

// Router is embedded inline in Traefik's HTTP router configuration.
type Router struct{}
