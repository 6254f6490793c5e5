module trireme.dev/apiserver

go 1.26

replace trireme.dev/api => ../api
