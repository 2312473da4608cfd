package redislimiter_test

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter/redislimiter"
)

// Every worker process runs this: all of them together send at most two
// requests a second to example.com, however many they are. The limits come
// from the environment (APP_RATE_LIMIT, APP_RATE_BURST, ...) and the
// configuration, as in one process; only the pace is kept in Redis.
func Example() {
	client := redis.NewClient(&redis.Options{
		Addr:                  "localhost:6379",
		ContextTimeoutEnabled: true, // calls end at the limiter's timeout
	})
	defer client.Close()
	l, err := redislimiter.New(client) // paces in-process while Redis is down
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	def, err := config.LimitFromEnv("APP", config.Limit{RequestsPerSecond: 1, Burst: 1})
	if err != nil {
		log.Fatal(err)
	}
	t, err := polite.NewTransport(nil, polite.WithLimiter(l), polite.WithConfig(&config.File{
		Default: def,
		Domains: map[string]config.Limit{"example.com": {RequestsPerSecond: 2, Burst: 2, MinDelay: 200 * time.Millisecond}},
	}))
	if err != nil {
		log.Fatal(err)
	}
	hc := &http.Client{Transport: t, Timeout: time.Minute}
	resp, err := hc.Get("https://example.com/")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	resp.Body.Close()
	s, _ := t.Stats("example.com")
	fmt.Println("paced in this process only, while Redis was away:", s.DegradedRequests)
}

// WithFailClosed, a request fails rather than go unpaced while Redis is
// down: for a rate that is a hard limit across all workers, such as an
// API key's.
func ExampleWithFailClosed() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	l, err := redislimiter.New(client, redislimiter.WithFailClosed(), redislimiter.WithPrefix("billing-api:"))
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	t, err := polite.NewTransport(nil, polite.WithLimiter(l), polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 10}))
	if err != nil {
		log.Fatal(err)
	}
	_ = &http.Client{Transport: t}
	// A request made while Redis is down returns an error for which
	// errors.Is(err, redislimiter.ErrUnavailable) holds.
}
