module trireme.dev/charts

go 1.26.0
