module github.com/polite-go/polite/examples/resty

go 1.25.0

require (
	github.com/go-resty/resty/v2 v2.17.2
	github.com/polite-go/polite v0.2.0
	github.com/stretchr/testify v1.12.1
	resty.dev/v3 v3.0.0-rc.4
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/text v0.38.0 // indirect
)
