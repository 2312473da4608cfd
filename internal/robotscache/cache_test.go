package robotscache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newCache returns a Cache that fetches from base directly, with no
// pacing, as the agent testbot.
func newCache(base http.RoundTripper) *Cache {
	return New(Config{
		Agent:         "testbot",
		MaxCrawlDelay: DefaultMaxCrawlDelay,
		Base:          base,
		Pacer:         func(base http.RoundTripper) http.RoundTripper { return base },
		Now:           time.Now,
	})
}

func TestRobotsKey(t *testing.T) {
	tests := map[string]string{
		"http://Example.COM/a":        "http://example.com:80",
		"http://example.com:80/a":     "http://example.com:80",
		"https://example.com/a":       "https://example.com:443",
		"https://example.com:8443/a?": "https://example.com:8443",
		"http://[::1]:8080/":          "http://::1:8080",
	}
	for raw, want := range tests {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, robotsKey(u), raw)
	}
}

// robotsServer answers every robots.txt with body and every other request
// with 200, and counts the robots.txt fetches per host.
type robotsServer struct {
	body    string
	fetches map[string]*atomic.Int64 // filled before use: read only
	total   atomic.Int64
}

func (s *robotsServer) RoundTrip(req *http.Request) (*http.Response, error) {
	body := "ok"
	if req.URL.Path == "/robots.txt" {
		s.total.Add(1)
		if n, ok := s.fetches[req.URL.Host]; ok {
			n.Add(1)
		}
		body = s.body
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// wildcardFile is a robots.txt of about n bytes of wildcard rules, the
// first of which disallows "/a0b".
func wildcardFile(n int) string {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Disallow: /*a*%d*b\n", i)
	}
	return b.String()
}

// checkBudget checks the cache's accounting: used is the sum of its
// entries' sizes, each the entry's own plus four bytes per byte of its
// file, and within the budget.
func checkBudget(t *testing.T, c *Cache) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum int64
	for entry := range c.hosts.All {
		key, e := entry.Key, entry.Value
		want := int64(robotsEntrySize)
		if e.rules != nil {
			want += e.rules.size
		}
		require.Equal(t, want, e.size, key)
		sum += e.size
	}
	require.Equal(t, sum, c.used, "used is the sum of the entries' sizes")
	require.LessOrEqual(t, c.used, c.budget, "the cache keeps its budget")
}

// check checks a GET of rawURL against c.
func check(t testing.TB, c *Cache, rawURL string) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	_, err = c.Check(context.Background(), req)
	return err
}

// TestRobotsCacheKeepsItsBudget: 1,000 hosts (100 under the race
// detector, where parsing is slow) each serve a 500 KiB file of wildcard
// rules, which the cache counts at 2 MiB each: every file is parsed and
// obeyed, and the cache never counts more than its 16 MiB.
func TestRobotsCacheKeepsItsBudget(t *testing.T) {
	hosts := 1000
	if raceEnabled || testing.Short() {
		hosts = 100
	}
	s := &robotsServer{body: wildcardFile(maxRobotsSize)}
	c := newCache(s)
	require.Equal(t, int64(16<<20), c.budget)
	for i := range hosts {
		host := fmt.Sprintf("http://h%d.example", i)
		require.ErrorIs(t, check(t, c, host+"/a0b"), ErrDisallowed, host)
		require.NoError(t, check(t, c, host+"/page"), host)
		checkBudget(t, c)
	}
	assert.Equal(t, int64(hosts), s.total.Load(), "one fetch per host: the second request found the file cached")
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Greater(t, c.used, c.budget/2, "the budget is used")
	assert.Less(t, c.hosts.Len(), hosts)
}

// TestRobotsFileLargerThanTheBudget: a file that alone counts more than
// the budget is still parsed and obeyed; it is not kept.
func TestRobotsFileLargerThanTheBudget(t *testing.T) {
	s := &robotsServer{body: wildcardFile(maxRobotsSize)}
	c := newCache(s)
	c.budget = 1 << 20
	for range 2 {
		require.ErrorIs(t, check(t, c, "http://example.com/a0b"), ErrDisallowed)
		require.NoError(t, check(t, c, "http://example.com/page"))
		checkBudget(t, c)
	}
	assert.Equal(t, int64(4), s.total.Load(), "fetched for every request, as it cannot be kept")
}

// TestRobotsCacheForgetsTheLeastRecentlyUsed fills a cache that holds
// five 100 KiB files with a sixth host: when the sixth's file comes, the
// least recently used host goes, and only it.
func TestRobotsCacheForgetsTheLeastRecentlyUsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hosts := []string{"h0.example", "h1.example", "h2.example", "h3.example", "h4.example", "h5.example"}
		s := &robotsServer{body: wildcardFile(100 << 10), fetches: map[string]*atomic.Int64{}}
		for _, h := range hosts {
			s.fetches[h] = new(atomic.Int64)
		}
		c := newCache(s)
		entry := int64(robotsEntrySize + 4*len(s.body))
		c.budget = 5 * entry
		visit := func(i int) { require.NoError(t, check(t, c, "http://"+hosts[i]+"/page")) }

		for i := 0; i <= 4; i++ {
			visit(i)
		}
		visit(0) // now the most recently used; h1 the least
		checkBudget(t, c)
		require.Equal(t, 5, c.hosts.Len())

		visit(5)
		checkBudget(t, c)
		c.mu.Lock()
		var kept []string
		for e := range c.hosts.All {
			kept = append(kept, e.Key)
		}
		c.mu.Unlock()
		assert.ElementsMatch(t, []string{"http://h0.example:80", "http://h2.example:80", "http://h3.example:80", "http://h4.example:80", "http://h5.example:80"}, kept,
			"h1 was the least recently used")
		for _, i := range []int{0, 2, 3, 4, 5} {
			visit(i)
			assert.Equal(t, int64(1), s.fetches[hosts[i]].Load(), hosts[i])
		}
	})
}

// BenchmarkCheck is the cost the robots.txt step adds to a request whose
// host's file is cached, but for telling the limiter its Crawl-delay:
// finding the entry and matching the URI, against a file of 50 rules with
// wildcards and against a hostile 500 KiB file of wildcard rules (with an
// ordinary URI, and with one of 238 octets made to match every rule's
// wildcards as far as they go).
func BenchmarkCheck(b *testing.B) {
	var realistic strings.Builder
	realistic.WriteString("User-agent: *\nCrawl-delay: 1\n")
	for _, s := range []string{"shop", "blog", "news", "user", "wiki"} {
		fmt.Fprintf(&realistic, "Disallow: /%s/*/checkout\nAllow: /%s/*/checkout/help$\nDisallow: /%s/*?*sort=\n", s, s, s)
		fmt.Fprintf(&realistic, "Disallow: /%s/*.pdf$\nDisallow: /*/%s/print\nAllow: /%s/public/\nDisallow: /%s/draft*\n", s, s, s, s)
		fmt.Fprintf(&realistic, "Disallow: /*?%s_id=*&ref=\nDisallow: /%s/*/edit$\nDisallow: /%s/tmp/\n", s, s, s)
	}
	article := "/blog/2024/05/a-long-article-title-about-robots.html?utm_source=feed&utm_medium=rss&page=2"
	// worst holds every octet the hostile rules need, in their order, as
	// robots' BenchmarkHostile does: each of its rules is matched in full.
	worst := "/" + strings.Repeat("a", 150) + "?" + strings.Repeat("ab0123456789", 7) + "%C3%BC"
	for _, bc := range []struct {
		name, body, uri string
	}{
		{"50_rules", realistic.String(), article},
		{"hostile_500KiB", wildcardFile(maxRobotsSize), article},
		{"hostile_500KiB_worst_URI", wildcardFile(maxRobotsSize), worst},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := newCache(&robotsServer{body: bc.body})
			req, err := http.NewRequest(http.MethodGet, "http://example.com"+bc.uri, nil)
			require.NoError(b, err)
			ctx := context.Background()
			_, want := c.Check(ctx, req) // the file is fetched
			require.True(b, want == nil || errors.Is(want, ErrDisallowed), want)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Check(ctx, req); (err == nil) != (want == nil) {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzCheck serves any file and checks any URI against it: no panic, and
// a Crawl-delay between zero and the cap.
func FuzzCheck(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /a\nCrawl-delay: 2\n", "/a")
	f.Add("Disallow: /a\nUser-agent: testbot\nAllow: /a/b$\nCrawl-delay: x\n", "/a/b")
	f.Add("user-agent:*\ndisallow:/*?*\ncrawl-delay: 1e300\n", "/q?x=1")
	f.Add("User-agent: *\nCrawl-delay: 99999999999\nDisallow: /private\n", "/public/%2e%2e/private/x")
	f.Fuzz(func(t *testing.T, body, uri string) {
		c := newCache(&robotsServer{body: body})
		rules, err := c.fetch(context.Background(), "http://example.com/robots.txt", "")
		require.NoError(t, err)
		require.Empty(t, rules.unreachable)
		assert.GreaterOrEqual(t, rules.crawlDelay, time.Duration(0))
		assert.LessOrEqual(t, rules.crawlDelay, DefaultMaxCrawlDelay)
		assert.LessOrEqual(t, rules.size, int64(4*maxRobotsSize))
		if allowed, rule := rules.match("testbot", uri); allowed != (rule == "") {
			t.Errorf("allowed %v with rule %q", allowed, rule)
		}
	})
}

// heldServer is a robotsServer whose robots.txt of held waits until
// release is closed.
type heldServer struct {
	robotsServer
	held    string
	release chan struct{}
}

func (s *heldServer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == s.held && req.URL.Path == "/robots.txt" {
		<-s.release
	}
	return s.robotsServer.RoundTrip(req)
}

// TestRobotsCacheKeepsAFetchInFlight: a host whose file is still being
// fetched is not forgotten when the cache is past its budget, though it
// is the least recently used, so that its waiters' fetch is the only one.
func TestRobotsCacheKeepsAFetchInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &heldServer{robotsServer: robotsServer{body: wildcardFile(100 << 10)}, held: "slow.example", release: make(chan struct{})}
		c := newCache(s)
		c.budget = robotsEntrySize + 4*int64(len(s.body)) // one file
		slow := make(chan error)
		go func() { slow <- check(t, c, "http://slow.example/page") }()
		synctest.Wait()

		require.NoError(t, check(t, c, "http://a.example/page"))
		require.NoError(t, check(t, c, "http://b.example/page"))
		c.mu.Lock()
		kept := c.hosts.Peek("http://slow.example:80") != nil
		c.mu.Unlock()
		assert.True(t, kept, "the host whose fetch is in flight stays")

		close(s.release)
		require.NoError(t, <-slow)
		checkBudget(t, c)
		assert.Equal(t, int64(3), s.total.Load(), "one fetch per host")
	})
}
