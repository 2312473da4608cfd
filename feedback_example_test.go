package polite_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// A 429 with Retry-After pauses the whole domain: the response comes back
// as it is, and the next request to the domain waits for the pause.
func Example_retryAfter() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer site.Close()
	transport, err := polite.NewTransport(nil, polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 1}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}

	resp, err := client.Get(site.URL)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)

	s, _ := transport.Stats("127.0.0.1")
	fmt.Println("throttled:", s.ThrottledResponses, "paused for:", s.PauseReason)
	fmt.Println("next request waits over 1m:", transport.RemainingWait("127.0.0.1") > time.Minute)
	// Output:
	// 429 Too Many Requests
	// throttled: 1 paused for: retry-after
	// next request waits over 1m: true
}

// With WithRobots, a path that robots.txt disallows is never requested.
// The crawler says who it is with WithUserAgent, and obeys the group of its
// product token, ExampleBot.
func ExampleWithRobots() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /\n\nUser-agent: ExampleBot\nDisallow: /private/\n")
			return
		}
		io.WriteString(w, "hello")
	}))
	defer site.Close()
	transport, err := polite.NewTransport(nil,
		polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 1}),
		polite.WithUserAgent("ExampleBot/2.1 (+https://example.com/bot)"),
		polite.WithRobots(""))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}

	for _, path := range []string{"/public/page", "/private/page"} {
		resp, err := client.Get(site.URL + path)
		if errors.Is(err, polite.ErrDisallowed) {
			fmt.Println(path, "disallowed")
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(path, resp.Status)
	}
	// Output:
	// /public/page 200 OK
	// /private/page disallowed
}
