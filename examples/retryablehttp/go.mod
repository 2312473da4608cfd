module github.com/polite-go/polite/examples/retryablehttp

go 1.25.0

require (
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/polite-go/polite v0.2.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/text v0.38.0 // indirect
)
