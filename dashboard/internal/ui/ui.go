// Package ui holds the console's page: plain HTML, CSS and ES modules,
// all served by the dashboard itself so that it works air-gapped.
package ui

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Assets are the page's files, rooted at index.html.
func Assets() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}
