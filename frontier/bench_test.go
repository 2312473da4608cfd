package frontier_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/internal/ticket"
)

// BenchmarkNext measures one Next, the end of the request's flight and its
// push back, with 100,000 requests pending over 100 or 10,000 domains
// whose turns are always free (a fast bucket): the cost of the heap, the
// queues, the Transport's RequestWait and the ticket. It should not
// grow with the number of domains beyond the heap's log.
//
//	go test -run '^$' -bench Next -benchmem ./frontier/
func BenchmarkNext(b *testing.B) {
	const pending = 100_000
	for _, domains := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("domains=%d", domains), func(b *testing.B) {
			tr, err := polite.NewTransport(instant, polite.WithDefault(config.Limit{RequestsPerSecond: 1e9, Burst: 1e6}))
			if err != nil {
				b.Fatal(err)
			}
			f := frontier.New(tr)
			origin := make(map[*url.URL]*http.Request, pending)
			for i := range pending {
				req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://d%d.test/%d", i%domains, i), nil)
				origin[req.URL] = req
				if err := f.Push(req); err != nil {
					b.Fatal(err)
				}
				if i < domains { // the Transport tracks every domain, as after a while of crawling
					if resp, err := tr.RoundTrip(req); err == nil {
						resp.Body.Close()
					}
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				req, err := f.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				ticket.From(req.Context()).Done()
				if err := f.Push(origin[req.URL]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
