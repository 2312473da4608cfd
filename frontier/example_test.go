package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/frontier"
)

// The usual worker pool over a channel, with three lines changed: the
// channel's make, send and receive become New, Push and Next (and close
// becomes Close). Each worker then takes the URL whose domain can go
// soonest, instead of sleeping in RoundTrip behind whatever URL came next.
func Example() {
	// A local server that answers for every domain (the base reaches it
	// as a proxy); a real program passes nil for http.DefaultTransport.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	defer site.Close()
	proxy, _ := url.Parse(site.URL)
	base := &http.Transport{Proxy: http.ProxyURL(proxy)}

	t, err := polite.NewTransport(base, polite.WithDefault(config.Limit{RequestsPerSecond: 20, Burst: 1}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: t}

	queue := frontier.New(t) // was: queue := make(chan *http.Request, 100)
	for _, u := range []string{"http://a.example/1", "http://a.example/2", "http://a.example/3", "http://b.example/1", "http://c.example/1"} {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			log.Fatal(err)
		}
		if err := queue.Push(req); err != nil { // was: queue <- req
			log.Fatal(err)
		}
	}
	queue.Close() // was: close(queue)

	var fetched atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for req, err := queue.Next(context.Background()); err == nil; req, err = queue.Next(context.Background()) { // was: for req := range queue
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close() // ends the request's claim on its domain
				fetched.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Println("fetched", fetched.Load(), "pages")
	// Output: fetched 5 pages
}

// A crawl that a worker pool can leave to the Frontier: duplicates are
// dropped, an answer that asks to come back (here a 503) goes back in line
// for its domain's next turn, and Wait says when every URL has its final
// answer, which is when to Close.
func ExampleFrontier_Done() {
	var busy atomic.Bool
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" && !busy.Swap(true) {
			w.WriteHeader(http.StatusServiceUnavailable) // the first time only
		}
	}))
	defer site.Close()

	t, err := polite.NewTransport(nil, polite.WithDefault(config.Limit{RequestsPerSecond: 20, Burst: 1}))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: t}
	queue := frontier.New(t, frontier.WithRetries(2))
	for _, path := range []string{"/a", "/busy", "/a", "/b"} {
		req, err := http.NewRequest(http.MethodGet, site.URL+path, nil)
		if err != nil {
			log.Fatal(err)
		}
		if err := queue.Push(req); err != nil && !errors.Is(err, frontier.ErrDuplicate) {
			log.Fatal(err)
		}
	}

	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for req, err := queue.Next(context.Background()); err == nil; req, err = queue.Next(context.Background()) {
				resp, err := client.Do(req)
				final := queue.Done(req, resp, err)
				if err != nil {
					continue
				}
				if final && resp.StatusCode == http.StatusOK {
					ok.Add(1)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	if err := queue.Wait(context.Background()); err != nil {
		log.Fatal(err)
	}
	queue.Close()
	wg.Wait()
	fmt.Println(ok.Load(), "pages fetched,", queue.Duplicates(), "duplicate dropped")
	// Output: 3 pages fetched, 1 duplicate dropped
}
