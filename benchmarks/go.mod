module github.com/polite-go/polite/benchmarks

go 1.25.0

require (
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/polite-go/polite v0.2.0
	github.com/polite-go/polite/limiter/redislimiter v0.2.0
	github.com/redis/go-redis/v9 v9.22.0
	golang.org/x/net v0.56.0
	golang.org/x/time v0.15.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.38.0 // indirect
)
