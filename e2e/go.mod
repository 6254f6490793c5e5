module trireme.dev/e2e

go 1.26.0

replace trireme.dev/api => ../api
