module shootout/targets/go-nethttp

go 1.26.0

require golang.org/x/crypto v0.58.0
