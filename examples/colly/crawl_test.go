package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

const pages = 6

// site serves pages /0 ... /5, each linking to all the others, and
// records when each request arrives. It answers for any host, so it can
// also stand in as a proxy.
type site struct {
	mu       sync.Mutex
	arrivals []time.Time
	paths    map[string]int
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.arrivals = append(s.arrivals, time.Now())
	if s.paths == nil {
		s.paths = map[string]int{}
	}
	s.paths[r.Host+r.URL.Path]++
	s.mu.Unlock()
	fmt.Fprint(w, "<html><body>")
	for i := range pages {
		fmt.Fprintf(w, `<a href="/%d">page %d</a>`, i, i)
	}
	fmt.Fprint(w, "</body></html>")
}

// last is when the last request arrived.
func (s *site) last() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.arrivals) == 0 {
		return time.Time{}
	}
	return s.arrivals[len(s.arrivals)-1]
}

func (s *site) visits() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.paths {
		out[k] = v
	}
	return out
}

// tenPerSecond paces a domain at 10 requests per second, without bursts.
var tenPerSecond = polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 1})

// crawlPaced crawls from startURL with c and checks that every page was
// visited once, that polite counted each under domain, and that the
// visits were spread out at 10 per second at most.
func crawlPaced(t *testing.T, c *colly.Collector, startURL string, s *site, tr *polite.Transport, domain string) {
	t.Helper()
	start := time.Now()
	require.NoError(t, c.Visit(startURL))
	c.Wait()
	visits := s.visits()
	assert.Len(t, visits, pages, "every page visited: %v", visits)
	for path, n := range visits {
		assert.Equal(t, 1, n, "%s visited once", path)
	}
	st, ok := tr.Stats(domain)
	require.True(t, ok, "polite saw %s", domain)
	assert.EqualValues(t, pages, st.TotalRequests)
	assert.GreaterOrEqual(t, st.DelayedRequests, int64(pages-2), "colly asked for pages at once; polite made them wait")
	// One-sided whatever the delays: the last start is 5 gaps after the
	// first, which is after start.
	assert.GreaterOrEqual(t, s.last().Sub(start), time.Duration(pages-1)*100*time.Millisecond, "5 gaps of 100ms")
}

// TestCollectorIsPaced hands polite to colly both ways: the collector's
// own client (WithTransport) and a client of one's own (SetClient).
func TestCollectorIsPaced(t *testing.T) {
	tests := []struct {
		name      string
		collector func(tr *polite.Transport) *colly.Collector
	}{
		{"WithTransport", func(tr *polite.Transport) *colly.Collector { return newCollector(tr, "127.0.0.1") }},
		{"SetClient", func(tr *polite.Transport) *colly.Collector {
			return newCollectorWithClient(&http.Client{Transport: tr, Timeout: 30 * time.Second}, "127.0.0.1")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &site{}
			srv := httptest.NewServer(s)
			defer srv.Close()
			tr, err := polite.NewTransport(nil, tenPerSecond)
			require.NoError(t, err)

			crawlPaced(t, tt.collector(tr), srv.URL+"/0", s, tr, "127.0.0.1")
		})
	}
}

// TestProxyUnderPolite sets the proxy on the base transport: requests go
// through the proxy (the only way to reach shop.test) and are paced.
func TestProxyUnderPolite(t *testing.T) {
	s := &site{}
	proxy := httptest.NewServer(s)
	defer proxy.Close()
	proxyURL, err := url.Parse(proxy.URL)
	require.NoError(t, err)
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.Proxy = http.ProxyURL(proxyURL)
	tr, err := polite.NewTransport(base, tenPerSecond)
	require.NoError(t, err)

	crawlPaced(t, newCollector(tr, "shop.test"), "http://shop.test/0", s, tr, "shop.test")
}

// TestSetProxyDropsPolite shows the trap the package doc warns about:
// after colly's SetProxy, requests no longer go through polite.
func TestSetProxyDropsPolite(t *testing.T) {
	s := &site{}
	proxy := httptest.NewServer(s)
	defer proxy.Close()
	tr, err := polite.NewTransport(nil, tenPerSecond)
	require.NoError(t, err)

	c := newCollector(tr, "shop.test")
	require.NoError(t, c.SetProxy(proxy.URL))
	var visited atomic.Int64
	c.OnResponse(func(*colly.Response) { visited.Add(1) })
	require.NoError(t, c.Visit("http://shop.test/0"))
	c.Wait()
	assert.EqualValues(t, pages, visited.Load(), "the crawl itself works")
	_, ok := tr.Stats("shop.test")
	assert.False(t, ok, "but polite never saw a request: SetProxy replaced its transport")
}
