package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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

// loopbackSite is a server on one loopback address, a domain of its own,
// that answers as answer says and notes when each path was asked for.
type loopbackSite struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string][]time.Time // by path
}

func startLoopbackSite(t *testing.T, ip string, answer func(w http.ResponseWriter, n int)) *loopbackSite {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	require.NoError(t, err)
	s := &loopbackSite{seen: map[string][]time.Time{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen[r.URL.Path] = append(s.seen[r.URL.Path], time.Now())
		n := len(s.seen[r.URL.Path])
		s.mu.Unlock()
		answer(w, n)
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *loopbackSite) arrivals(path string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.seen[path]...)
}

func (s *loopbackSite) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, times := range s.seen {
		n += len(times)
	}
	return n
}

// TestWorkerPoolWithRetriesDuplicatesAndWait drives the usual worker
// pool from a Frontier over three loopback hosts: a healthy one, one that
// throttles (a 429 with Retry-After: 1 to each page's first request) and
// one that answers only 502. Every URL is pushed twice, in other
// spellings the second time: the duplicates are dropped. A throttled
// page goes back in line and is fetched after the pause; the failing
// host is given up after three 502s and its pages left are refused at
// once. Wait returns when every URL has a final answer, and the time the
// URLs spent in line is in the stats.
func TestWorkerPoolWithRetriesDuplicatesAndWait(t *testing.T) {
	healthy := startLoopbackSite(t, "127.0.0.1", func(http.ResponseWriter, int) {})
	throttling := startLoopbackSite(t, "127.0.0.2", func(w http.ResponseWriter, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	failing := startLoopbackSite(t, "127.0.0.3", func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusBadGateway) })

	tr, err := polite.NewTransport(nil, polite.WithDefault(config.Limit{RequestsPerSecond: 20, Burst: 1}),
		polite.WithMaxErrors(3), polite.WithMaxPause(2*time.Second))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	f := frontier.New(tr, frontier.WithRetries(2))

	var urls []string
	for i := range 8 {
		urls = append(urls, fmt.Sprintf("%s/a/%d", healthy.URL, i))
	}
	for i := range 3 {
		urls = append(urls, fmt.Sprintf("%s/b/%d", throttling.URL, i))
	}
	for i := range 5 {
		urls = append(urls, fmt.Sprintf("%s/c/%d", failing.URL, i))
	}
	push := func(u string) error {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		require.NoError(t, err)
		return f.Push(req)
	}
	for _, u := range urls {
		require.NoError(t, push(u))
	}
	for _, u := range urls { // the same URLs, spelt otherwise
		require.ErrorIs(t, push(strings.Replace(u, "http://", "HTTP://", 1)+"#again"), frontier.ErrDuplicate)
	}
	assert.Equal(t, len(urls), f.Duplicates())

	var (
		mu    sync.Mutex
		final = map[string]string{} // by URL: the final status, "given up", or the error
	)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for req, err := f.Next(t.Context()); err == nil; req, err = f.Next(t.Context()) {
				resp, err := client.Do(req)
				if resp != nil {
					io.Copy(io.Discard, resp.Body)
				}
				if f.Done(req, resp, err) {
					mu.Lock()
					_, twice := final[req.URL.String()]
					assert.False(t, twice, "%s: one final answer", req.URL)
					switch {
					case errors.Is(err, polite.ErrGivenUp):
						final[req.URL.String()] = "given up"
					case err != nil:
						final[req.URL.String()] = err.Error()
					default:
						final[req.URL.String()] = resp.Status
					}
					mu.Unlock()
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		})
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	start := time.Now()
	require.NoError(t, f.Wait(ctx), "every URL has a final answer")
	t.Logf("every URL answered in %v", time.Since(start).Round(time.Millisecond))
	f.Close()
	wg.Wait()

	require.Len(t, final, len(urls))
	for i := range 8 {
		path := fmt.Sprintf("/a/%d", i)
		assert.Len(t, healthy.arrivals(path), 1, "%s: fetched once", path)
		assert.Equal(t, "200 OK", final[healthy.URL+path])
	}
	for i := range 3 {
		path := fmt.Sprintf("/b/%d", i)
		got := throttling.arrivals(path)
		require.Len(t, got, 2, "%s: throttled, then fetched", path)
		assert.GreaterOrEqual(t, got[1].Sub(got[0]), 900*time.Millisecond, "%s: after the pause", path)
		assert.Equal(t, "200 OK", final[throttling.URL+path])
	}
	assert.Equal(t, 3, failing.total(), "the failing host is given up at its third 502")
	givenUp := 0
	for i := range 5 {
		u := fmt.Sprintf("%s/c/%d", failing.URL, i)
		if final[u] == "given up" {
			givenUp++
			continue
		}
		assert.Equal(t, "502 Bad Gateway", final[u], "%s: the 502 that gave its host up is final", u)
	}
	assert.Positive(t, givenUp)

	s, ok := tr.Stats(throttling.URL)
	require.True(t, ok)
	assert.GreaterOrEqual(t, s.QueuedTime, 2*time.Second, "the throttled URLs waited in line for their pauses")
}

// TestDoneWithoutRetriesIsFinal: without WithRetries every answer is
// final, Close then Next's io.EOF work as before, and Done on a request
// the Frontier did not hand out does nothing.
func TestDoneWithoutRetriesIsFinal(t *testing.T) {
	throttling := startLoopbackSite(t, "127.0.0.1", func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusTooManyRequests) })
	tr, err := polite.NewTransport(nil)
	require.NoError(t, err)
	f := frontier.New(tr)
	req, err := http.NewRequest(http.MethodGet, throttling.URL+"/x", nil)
	require.NoError(t, err)
	require.NoError(t, f.Push(req))
	assert.True(t, f.Done(req, nil, nil), "not handed out")
	f.Close()
	got, err := f.Next(t.Context())
	require.NoError(t, err)
	resp, err := tr.RoundTrip(got)
	require.NoError(t, err)
	resp.Body.Close()
	assert.True(t, f.Done(got, resp, nil))
	_, err = f.Next(t.Context())
	assert.True(t, errors.Is(err, io.EOF))
	assert.NoError(t, f.Wait(t.Context()))
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		status int
		err    error
		want   bool
	}{
		{200, nil, false},
		{404, nil, false},
		{429, nil, true},
		{503, nil, true},
		{524, nil, true},
		{501, nil, false},
		{0, &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{0, context.Canceled, false},
		{0, &net.DNSError{Err: "no such host", IsNotFound: true}, false},
		{0, polite.ErrDisallowed, false},
		{0, fmt.Errorf("x: %w", polite.ErrGivenUp), false},
		{0, &polite.WaitError{Err: polite.ErrRobotsUnreachable}, true},
		{0, &polite.WaitError{Err: context.DeadlineExceeded}, false},
	} {
		assert.Equal(t, c.want, frontier.Retryable(c.status, c.err), "%d %v", c.status, c.err)
	}
}
