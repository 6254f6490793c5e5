module github.com/abbot/go-http-auth

go 1.26.0

require trireme.dev/images/traefik/upstream-http-auth v0.0.0-00010101000000-000000000000

require golang.org/x/crypto v0.0.0-20210921155107-089bfa567519 // indirect

// Upstream's package itself, under a path of its own so that this one may
// stand in for it.
replace trireme.dev/images/traefik/upstream-http-auth => github.com/abbot/go-http-auth v0.4.1-0.20220112235402-e1cee1c72f2f
