package polite

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

func TestRobotsParseIsLenient(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		allowed    map[string]bool
		crawlDelay time.Duration
	}{
		{"well formed", "User-agent: *\nDisallow: /a\nCrawl-delay: 1.5\n",
			map[string]bool{"/a": false, "/b": true}, 1500 * time.Millisecond},
		{"a rule before any user-agent is dropped", "Disallow: /a\nUser-agent: *\nDisallow: /b\n",
			map[string]bool{"/a": true, "/b": false}, 0},
		{"a malformed crawl-delay is dropped", "User-agent: *\nCrawl-delay: soon\nDisallow: /b\n",
			map[string]bool{"/b": false, "/c": true}, 0},
		{"a negative crawl-delay is dropped", "User-agent: *\nCrawl-delay: -3\nDisallow: /b\n",
			map[string]bool{"/b": false}, 0},
		{"CRLF and comments", "User-agent: * # all\r\nDisallow: /b # no\r\n",
			map[string]bool{"/b": false, "/a": true}, 0},
		{"garbage allows all", "\x00\xff<html>not robots</html>",
			map[string]bool{"/": true, "/a": true}, 0},
		{"wildcards", "User-agent: *\nDisallow: /*.pdf$\n",
			map[string]bool{"/x.pdf": false, "/x.pdf?y": true, "/x.html": true}, 0},
		{"the query counts", "User-agent: *\nDisallow: /search?q=\n",
			map[string]bool{"/search?q=go": false, "/search": true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := parseRobots([]byte(tt.body)).FindGroup("testbot")
			for path, want := range tt.allowed {
				assert.Equal(t, want, g.Test(path), path)
			}
			assert.Equal(t, tt.crawlDelay, g.CrawlDelay)
		})
	}
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

// TestRobotsCacheIsBounded: however many hosts a crawl meets, the cache
// keeps at most maxHosts of them.
func TestRobotsCacheIsBounded(t *testing.T) {
	base := roundTripper(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("User-agent: *\nDisallow: /x\n")), Request: req}, nil
	})
	tr, err := NewTransport(base, WithDefault(config.Limit{RequestsPerSecond: 1e6, Burst: 1000}), WithRobots("testbot"))
	require.NoError(t, err)
	tr.robots.maxHosts = 8
	for i := range 100 {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://h%d.example/page", i), nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		tr.robots.mu.Lock()
		n := len(tr.robots.hosts)
		tr.robots.mu.Unlock()
		require.LessOrEqual(t, n, 8)
	}
	// The most recent host is still known: no fetch for it.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://h99.example/x", nil)
	_, err = tr.RoundTrip(req)
	assert.ErrorIs(t, err, ErrDisallowed)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func FuzzRobotsParse(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /a\nCrawl-delay: 2\n", "/a")
	f.Add("Disallow: /a\nUser-agent: testbot\nAllow: /a/b$\nCrawl-delay: x\n", "/a/b")
	f.Add("user-agent:*\ndisallow:/*?*\n", "/q?x=1")
	f.Fuzz(func(t *testing.T, body, path string) {
		g := parseRobots([]byte(body)).FindGroup("testbot")
		g.Test(path)
		require.GreaterOrEqual(t, g.CrawlDelay, time.Duration(0))
	})
}
