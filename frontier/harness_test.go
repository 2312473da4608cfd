package frontier_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/frontier"
)

// workload is one row of the harness's table.
type workload struct {
	urls, domains int
	rate          float64 // per domain, burst 1
	workers       int
	latency       time.Duration // of every response
}

// ideal is the least wall time any schedule can reach: the workers cannot
// finish before the time all responses take, shared among them
// (urls*latency/workers), and a domain cannot finish before its last turn
// plus one response ((n-1)/rate + latency for its n URLs, with a burst of
// one). The larger of the two bounds the run.
func (w workload) ideal() time.Duration {
	perDomain := (w.urls + w.domains - 1) / w.domains
	workerBound := time.Duration(w.urls) * w.latency / time.Duration(w.workers)
	paceBound := time.Duration(float64(perDomain-1)/w.rate*float64(time.Second)) + w.latency
	return max(workerBound, paceBound)
}

// TestHarness reproduces the table of issue 15: the usual worker pool over
// polite, the same pool over a Frontier, and the ideal, on a local server
// that answers every domain (d0.example, d1.example, ...) after a fixed
// latency. It takes about two minutes, so it runs only when asked:
//
//	POLITE_HARNESS=1 go test -run TestHarness -v -timeout 10m ./frontier/
func TestHarness(t *testing.T) {
	if os.Getenv("POLITE_HARNESS") != "1" {
		t.Skip("the benchmark harness takes about two minutes: run it with POLITE_HARNESS=1")
	}
	rows := []workload{
		{urls: 1_000, domains: 40, rate: 2, workers: 8, latency: 100 * time.Millisecond},
		{urls: 10_000, domains: 1_000, rate: 2, workers: 32, latency: 50 * time.Millisecond},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n| work | a worker pool over polite | the same pool over a Frontier | ideal |\n|---|---|---|---|\n")
	for _, w := range rows {
		urls := shuffledURLs(w)
		plain := runPool(t, w, urls, false)
		withFrontier := runPool(t, w, urls, true)
		ideal := w.ideal()
		fmt.Fprintf(&table, "| %d URLs, %d domains at %g/s, %d workers, %v responses | %.1f s (%.2f×) | %.1f s (%.2f×) | %.1f s |\n",
			w.urls, w.domains, w.rate, w.workers, w.latency, plain.Seconds(), ratio(plain, ideal),
			withFrontier.Seconds(), ratio(withFrontier, ideal), ideal.Seconds())
		assert.Less(t, ratio(withFrontier, ideal), 1.05, "within 5 percent of ideal")
	}
	t.Log(table.String())
}

func ratio(d, ideal time.Duration) float64 { return d.Seconds() / ideal.Seconds() }

// shuffledURLs spreads w's URLs evenly over its domains and shuffles them
// (with a fixed seed, so that both pools get the same order).
func shuffledURLs(w workload) []string {
	urls := make([]string, w.urls)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://d%d.example/%d", i%w.domains, i)
	}
	rand.New(rand.NewPCG(15, 15)).Shuffle(len(urls), func(i, j int) { urls[i], urls[j] = urls[j], urls[i] })
	return urls
}

// runPool fetches urls with w's workers through a fresh polite Transport,
// from a channel or from a Frontier, and returns the wall time.
func runPool(t *testing.T, w workload, urls []string, useFrontier bool) time.Duration {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		time.Sleep(w.latency)
		io.WriteString(rw, "ok")
	}))
	defer srv.Close()
	var dialer net.Dialer
	base := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", srv.Listener.Addr().String()) // every domain is the test server
		},
		MaxIdleConnsPerHost: w.workers,
	}
	defer base.CloseIdleConnections()
	tr, err := polite.NewTransport(base, polite.WithDefault(config.Limit{RequestsPerSecond: w.rate, Burst: 1}))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	get := func(resp *http.Response, err error) {
		if !assert.NoError(t, err) {
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	start := time.Now()
	var wg sync.WaitGroup
	if !useFrontier {
		// The usual worker pool.
		queue := make(chan string, len(urls))
		for _, u := range urls {
			queue <- u
		}
		close(queue)
		for range w.workers {
			wg.Go(func() {
				for u := range queue {
					get(client.Get(u))
				}
			})
		}
	} else {
		// The same, with three lines changed.
		queue := frontier.New(tr)
		for _, u := range urls {
			req, err := http.NewRequest(http.MethodGet, u, nil)
			require.NoError(t, err)
			require.NoError(t, queue.Push(req))
		}
		queue.Close()
		for range w.workers {
			wg.Go(func() {
				for req, err := queue.Next(context.Background()); err == nil; req, err = queue.Next(context.Background()) {
					get(client.Do(req))
				}
			})
		}
	}
	wg.Wait()
	return time.Since(start)
}
