package polite_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostServer is a test server that answers for any host name and notes
// when each request arrived, by the host it was sent to.
type hostServer struct {
	srv  *httptest.Server
	port string

	mu       sync.Mutex
	arrivals map[string][]time.Time
	all      []time.Time
}

func newHostServer(t *testing.T) *hostServer {
	t.Helper()
	s := &hostServer{arrivals: map[string][]time.Time{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		host, _, _ := net.SplitHostPort(r.Host)
		s.mu.Lock()
		s.arrivals[host] = append(s.arrivals[host], now)
		s.all = append(s.all, now)
		s.mu.Unlock()
	}))
	t.Cleanup(s.srv.Close)
	u, err := url.Parse(s.srv.URL)
	require.NoError(t, err)
	s.port = u.Port()
	return s
}

// base is a transport that sends every request to the server, whatever its
// host, as if every name resolved to it.
func (s *hostServer) base() *http.Transport {
	addr := s.srv.Listener.Addr().String()
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 100,
	}
}

// url is the URL of path on host, at the server's port.
func (s *hostServer) url(host, path string) string {
	return "http://" + host + ":" + s.port + path
}

// at returns the arrivals at host, or at every host for "".
func (s *hostServer) at(host string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if host == "" {
		return append([]time.Time(nil), s.all...)
	}
	return append([]time.Time(nil), s.arrivals[host]...)
}

// minGap is the shortest gap between two of times, which are in order.
func minGap(times []time.Time) time.Duration {
	least := time.Duration(1<<63 - 1)
	for i := 1; i < len(times); i++ {
		least = min(least, times[i].Sub(times[i-1]))
	}
	return least
}

// fetchAll sends a GET of each URL at once, each from its own goroutine,
// and fails t if any fails.
func fetchAll(t *testing.T, client *http.Client, urls []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(urls))
	for _, u := range urls {
		wg.Go(func() {
			resp, err := client.Get(u)
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// repeat returns n copies of each of urls, interleaved.
func repeat(n int, urls ...string) []string {
	var out []string
	for range n {
		out = append(out, urls...)
	}
	return out
}

func hostOf(rawURL string) string {
	u, _ := url.Parse(rawURL)
	return strings.ToLower(u.Hostname())
}
