module trireme.dev/e2e

go 1.26

replace trireme.dev/api => ../api
