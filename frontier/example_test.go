package frontier_test

import (
	"context"
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
				resp.Body.Close() // ends the request's hold on its domain
				fetched.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Println("fetched", fetched.Load(), "pages")
	// Output: fetched 5 pages
}
