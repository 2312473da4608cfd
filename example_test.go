package polite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// fakeWeb starts a local server that answers for every site, and returns a
// base transport that reaches it as an HTTP proxy, so that the examples can
// name real domains without the network. A real program passes nil, for
// http.DefaultTransport, instead. The server answers 404 for /missing and
// 200 otherwise.
func fakeWeb() (base http.RoundTripper, stop func()) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	proxy, err := url.Parse(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(proxy)}
	return tr, func() {
		tr.CloseIdleConnections()
		srv.Close()
	}
}

// fetch gets rawURL and returns its status, or the error.
func fetch(client *http.Client, rawURL string) string {
	resp, err := client.Get(rawURL)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.Status
}

// Wrap a client's transport; every request is paced by its domain.
func Example() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	}))
	defer site.Close()

	transport, err := polite.NewTransport(nil, polite.WithDefault(config.Limit{RequestsPerSecond: 5, Burst: 1}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport, Timeout: time.Minute}

	for _, path := range []string{"/a", "/b"} {
		resp, err := client.Get(site.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", resp.Status, body)
	}
	s, _ := transport.Stats("127.0.0.1")
	fmt.Println("requests sent:", s.TotalRequests)
	// Output:
	// 200 OK: hello from /a
	// 200 OK: hello from /b
	// requests sent: 2
}

func ExampleWithDomain() {
	base, stop := fakeWeb()
	defer stop()

	transport, err := polite.NewTransport(base,
		polite.WithDefault(config.Limit{RequestsPerSecond: 1, Burst: 1}),
		// DomainKey keys requests by registrable domain: www.example.com
		// and api.example.com share example.com's limit.
		polite.WithDomain("example.com", config.Limit{RequestsPerSecond: 10, Burst: 3}),
	)
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	for _, u := range []string{"http://www.example.com/", "http://api.example.com/v1", "http://example.com/about"} {
		fmt.Println(u, fetch(client, u))
	}
	s, _ := transport.Stats("example.com")
	fmt.Println("example.com:", s.TotalRequests, "requests,", s.DelayedRequests, "delayed")

	// An entry the key function can never produce is an error.
	_, err = polite.NewTransport(base, polite.WithDomain("www.example.com", config.Limit{RequestsPerSecond: 1, Burst: 1}))
	var fe *config.FieldError
	fmt.Println(errors.As(err, &fe), fe.Domain, fe.Field)
	// Output:
	// http://www.example.com/ 200 OK
	// http://api.example.com/v1 200 OK
	// http://example.com/about 200 OK
	// example.com: 3 requests, 0 delayed
	// true www.example.com domains
}

func ExampleWithConfig() {
	f, err := config.Parse([]byte(`{
		"version": "1.0",
		"default_config": {"requests_per_second": 1.0, "burst_capacity": 1},
		"domains": {
			"example.com": {"requests_per_second": 10, "burst_capacity": 5, "max_concurrent": 2},
			"example.org": {"min_delay": "1.5s", "jitter": "500ms", "quotas": [{"requests": 100, "window": "24h"}]},
			"localhost": {"disabled": true}
		}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	base, stop := fakeWeb()
	defer stop()
	transport, err := polite.NewTransport(base, polite.WithConfig(f))
	if err != nil {
		log.Fatal(err)
	}

	client := &http.Client{Transport: transport}
	fmt.Println(fetch(client, "http://www.example.org/"))
	s, _ := transport.Stats("example.org")
	fmt.Println("quota left today:", s.Quotas[0].Remaining)
	fmt.Println("next request waits at least 1.5s:", transport.RemainingWait("example.org") >= time.Second)
	// Output:
	// 200 OK
	// quota left today: 99
	// next request waits at least 1.5s: true
}

func ExampleTransport_Stats() {
	base, stop := fakeWeb()
	defer stop()
	transport, err := polite.NewTransport(base, polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 3}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	fetch(client, "http://example.com/")
	fetch(client, "http://example.com/missing")
	fetch(client, "http://example.net/")

	// A request whose context ends before its turn is not sent.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.com/", nil)
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Do(req)
	fmt.Println("cancelled:", errors.Is(err, context.Canceled))

	s, _ := transport.Stats("example.com")
	fmt.Println("sent:", s.TotalRequests)
	fmt.Println("cancelled:", s.CanceledRequests)
	fmt.Println("2xx:", s.Responses[2], "4xx:", s.Responses[4])
	fmt.Println("in flight:", s.InFlight)
	fmt.Println("domains:", len(transport.AllStats()))
	// Output:
	// cancelled: true
	// sent: 2
	// cancelled: 1
	// 2xx: 1 4xx: 1
	// in flight: 0
	// domains: 2
}

func ExampleTransport_RemainingWait() {
	base, stop := fakeWeb()
	defer stop()
	transport, err := polite.NewTransport(base, polite.WithDefault(config.Limit{MinDelay: time.Hour}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fetch(&http.Client{Transport: transport}, "http://example.com/"))
	fmt.Println("example.com:", transport.RemainingWait("example.com").Round(time.Minute))
	fmt.Println("example.net:", transport.RemainingWait("example.net"))
	// Output:
	// 200 OK
	// example.com: 1h0m0s
	// example.net: 0s
}

// min_delay spaces the starts of a domain's requests; jitter adds a random
// part to each gap, so the crawl does not tick like a clock.
func Example_minDelay() {
	base, stop := fakeWeb()
	defer stop()
	transport, err := polite.NewTransport(base,
		polite.WithDomain("example.com", config.Limit{MinDelay: 200 * time.Millisecond, Jitter: 50 * time.Millisecond}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}

	start := time.Now()
	for range 3 {
		fetch(client, "http://example.com/")
	}
	fmt.Println("3 requests took at least 400ms:", time.Since(start) >= 400*time.Millisecond)
	s, _ := transport.Stats("example.com")
	fmt.Println("delayed:", s.DelayedRequests)
	// Output:
	// 3 requests took at least 400ms: true
	// delayed: 2
}

// A quota caps the requests in any sliding window; several can apply at
// once (30 an hour and 100 a day, say).
func Example_quotas() {
	base, stop := fakeWeb()
	defer stop()
	transport, err := polite.NewTransport(base,
		polite.WithDomain("example.com", config.Limit{
			RequestsPerSecond: 100, Burst: 10,
			Quotas: []config.Quota{{Requests: 3, Window: time.Hour}},
		}),
		// Fail at once rather than wait an hour for the window.
		polite.WithMaxWait(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	for range 3 {
		fmt.Println(fetch(client, "http://example.com/"))
	}
	_, err = client.Get("http://example.com/")
	var we *polite.WaitError
	if errors.As(err, &we) {
		fmt.Println("fourth:", errors.Is(err, limiter.ErrWaitTooLong), "could go in", time.Until(we.RetryAt).Round(time.Minute))
	}
	s, _ := transport.Stats("example.com")
	q := s.Quotas[0]
	fmt.Printf("quota %d per %v: %d left\n", q.Limit, q.Window, q.Remaining)
	// Output:
	// 200 OK
	// 200 OK
	// 200 OK
	// fourth: true could go in 1h0m0s
	// quota 3 per 1h0m0s: 0 left
}

// max_concurrent caps the requests in flight: a request holds its place
// until its response body is closed.
func Example_maxConcurrent() {
	base, stop := fakeWeb()
	defer stop()
	transport, err := polite.NewTransport(base,
		polite.WithDefault(config.Limit{RequestsPerSecond: 100, Burst: 10, MaxConcurrent: 2}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	first, err := client.Get("http://example.com/1")
	if err != nil {
		log.Fatal(err)
	}
	second, err := client.Get("http://example.com/2")
	if err != nil {
		log.Fatal(err)
	}
	s, _ := transport.Stats("example.com")
	fmt.Println("in flight:", s.InFlight)

	// A third request waits for a place, as long as its context allows.
	hurried := &http.Client{Transport: transport, Timeout: 100 * time.Millisecond}
	_, err = hurried.Get("http://example.com/3")
	fmt.Println("third gave up:", errors.Is(err, context.DeadlineExceeded))

	first.Body.Close()
	fmt.Println("third after a close:", fetch(client, "http://example.com/3"))
	second.Body.Close()
	s, _ = transport.Stats("example.com")
	fmt.Println("in flight:", s.InFlight)
	// Output:
	// in flight: 2
	// third gave up: true
	// third after a close: 200 OK
	// in flight: 0
}

func ExampleWithMaxWait() {
	base, stop := fakeWeb()
	defer stop()
	transport, err := polite.NewTransport(base,
		polite.WithDefault(config.Limit{MinDelay: time.Hour}),
		polite.WithMaxWait(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	fmt.Println(fetch(client, "http://example.com/"))

	_, err = client.Get("http://example.com/")
	var we *polite.WaitError
	fmt.Println(errors.Is(err, limiter.ErrWaitTooLong), errors.As(err, &we))
	fmt.Println(we.Domain, "could go in", time.Until(we.RetryAt).Round(time.Minute))
	fmt.Println("the refusal took nothing:", transport.RemainingWait("example.com") <= time.Hour)
	// Output:
	// 200 OK
	// true true
	// example.com could go in 1h0m0s
	// the refusal took nothing: true
}

// A local test server needs no pacing; its stats are still kept.
func ExampleWithLoopbackExempt() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer site.Close()
	transport, err := polite.NewTransport(nil, polite.WithLoopbackExempt(),
		polite.WithDefault(config.Limit{MinDelay: time.Hour}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	for range 5 {
		fetch(client, site.URL)
	}
	s, _ := transport.Stats("127.0.0.1")
	fmt.Println("sent:", s.TotalRequests, "delayed:", s.DelayedRequests)
	// Output:
	// sent: 5 delayed: 0
}

// A Trace hears what the Transport does for each request, as
// net/http/httptrace hears what net/http does; package otelpolite makes
// spans of it.
func ExampleWithTrace() {
	base, stop := fakeWeb()
	defer stop()
	trace := &polite.Trace{
		Waited: func(_ context.Context, domain, scope string, reason limiter.Reason, wait time.Duration) {
			fmt.Println("waited for", domain, "in its", scope, "scope, for its", reason, wait > 0)
		},
		Sent: func(_ context.Context, domain string, _ bool) { fmt.Println("sent to", domain) },
		Refused: func(_ context.Context, domain string, err error) {
			fmt.Println("not sent to", domain, "wait too long:", errors.Is(err, limiter.ErrWaitTooLong))
		},
	}
	transport, err := polite.NewTransport(base,
		polite.WithDefault(config.Limit{MinDelay: 300 * time.Millisecond}),
		polite.WithMaxWait(time.Second),
		polite.WithTrace(trace))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	fetch(client, "http://example.com/1")
	fetch(client, "http://example.com/2")
	if err := transport.SetLimit("example.com", config.Limit{MinDelay: time.Hour}); err != nil {
		log.Fatal(err)
	}
	fetch(client, "http://example.com/3")
	// Output:
	// sent to example.com
	// waited for example.com in its domain scope, for its min_delay true
	// sent to example.com
	// not sent to example.com wait too long: true
}
