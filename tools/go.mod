module github.com/polite-go/polite/tools

go 1.25.0

require golang.org/x/mod v0.40.0
