package polite_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
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

// arrivalSlack is how much shorter than the gap between two starts the
// gap between their arrivals at a test server may be, on a loaded machine:
// the first of them may have had to set up its connection.
const arrivalSlack = 60 * time.Millisecond

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

// loopback is a lookup that resolves every name to 127.0.0.1.
func loopback(context.Context, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestServerLimitPacesDomainsOnOneServerTogether checks that two domains
// that resolve to one address keep the server's gap between all their
// requests as they reach the base, while each domain alone would go at
// once. The base notes the arrivals: a server's handler, which a loaded
// machine may run late for one connection and not the next, once noted
// two requests 200 ms apart 7 ms apart.
func TestServerLimitPacesDomainsOnOneServerTogether(t *testing.T) {
	const gap = 200 * time.Millisecond
	base := &arrivalBase{}
	tr := newTransport(t, base, polite.WithDefault(fastLimit), polite.WithLookup(loopback),
		polite.WithServerLimit(config.Limit{MinDelay: gap}))
	fetchAll(t, &http.Client{Transport: tr}, repeat(3, "http://a.test/", "http://b.test/"))
	all := base.sorted()
	require.Len(t, all, 6)
	assert.GreaterOrEqual(t, minGap(all), gap-arrivalSlack, "both domains share the server's gap")
	for _, d := range []string{"a.test", "b.test"} {
		st, ok := tr.Stats(d)
		require.True(t, ok)
		assert.EqualValues(t, 3, st.TotalRequests)
	}
}

// TestServerLimitLookupFailureKeepsAPace checks that a request whose
// host does not resolve is sent to the base, which fails it as net/http
// would, under the server limit still: the next one waits for its turn.
func TestServerLimitLookupFailureKeepsAPace(t *testing.T) {
	errDNS := &net.DNSError{Err: "no such host", Name: "nowhere.test", IsNotFound: true}
	var sent atomic.Int64
	base := baseFunc(func(*http.Request) (*http.Response, error) {
		sent.Add(1)
		return nil, errDNS
	})
	tr := newTransport(t, base, polite.WithDefault(fastLimit),
		polite.WithLookup(func(context.Context, string) ([]netip.Addr, error) { return nil, errDNS }),
		polite.WithServerLimit(everyHour), polite.WithMaxWait(time.Minute))
	_, err := tr.RoundTrip(get(t, context.Background(), "http://nowhere.test/"))
	assert.ErrorIs(t, err, errDNS)
	_, err = tr.RoundTrip(get(t, context.Background(), "http://elsewhere.test/"))
	assert.ErrorIs(t, err, limiter.ErrWaitTooLong, "hosts that do not resolve share a server's pace")
	assert.EqualValues(t, 1, sent.Load())
}

// TestGlobalLimitNeverExceeded sends requests to 50 domains, whose own
// limits allow far more, under a global 20 a second (burst 1), and counts
// at the server the arrivals in every window of one second: never more
// than 20 plus one for the window's edge.
func TestGlobalLimitNeverExceeded(t *testing.T) {
	const rate, domains, perDomain = 20, 50, 2
	s := newHostServer(t)
	tr := newTransport(t, s.base(), polite.WithDefault(fastLimit), polite.WithKeyFunc(polite.HostKey),
		polite.WithGlobalLimit(config.Limit{RequestsPerSecond: rate, Burst: 1}))
	var urls []string
	for i := range domains {
		urls = append(urls, s.url(fmt.Sprintf("d%d.test", i), "/"))
	}
	start := time.Now()
	fetchAll(t, &http.Client{Transport: tr}, repeat(perDomain, urls...))
	all := s.at("")
	require.Len(t, all, domains*perDomain)
	slices.SortFunc(all, time.Time.Compare)
	for i := range all {
		j := i
		for j < len(all) && all[j].Sub(all[i]) < time.Second {
			j++
		}
		require.LessOrEqual(t, j-i, rate+1, "arrivals in the second from %v", all[i].Sub(start))
	}
}

// TestScopesHoldNoTurnWhileWaitingForAnother checks that a request waiting
// for its domain's turn does not hold a global turn meanwhile: a request
// to another domain takes the next global turn, at 0.5 s, not the one
// after it, at 1 s.
func TestScopesHoldNoTurnWhileWaitingForAnother(t *testing.T) {
	s := newHostServer(t)
	tr := newTransport(t, s.base(), polite.WithKeyFunc(polite.HostKey),
		polite.WithDefault(fastLimit),
		polite.WithDomain("slow.test", config.Limit{MinDelay: 2 * time.Second}),
		polite.WithGlobalLimit(config.Limit{RequestsPerSecond: 2, Burst: 1}))
	client := &http.Client{Transport: tr}
	start := time.Now()
	fetchAll(t, client, []string{s.url("slow.test", "/")})
	var wg sync.WaitGroup
	wg.Go(func() { fetchAll(t, client, []string{s.url("slow.test", "/")}) })
	time.Sleep(100 * time.Millisecond) // the slow domain's second request is waiting
	fetchAll(t, client, []string{s.url("other.test", "/")})
	wg.Wait()
	other := s.at("other.test")
	require.Len(t, other, 1)
	assert.Less(t, other[0].Sub(start), 900*time.Millisecond, "the next global turn was free for it")
	slow := s.at("slow.test")
	require.Len(t, slow, 2)
	assert.GreaterOrEqual(t, slow[1].Sub(slow[0]), 2*time.Second-arrivalSlack, "the slow domain kept its gap")
}

// TestScopesCancelledWaitGivesEveryTurnBack checks that a request whose
// context ends while it waits gives back its turns in every scope: the
// next request goes at the turn it gave back.
func TestScopesCancelledWaitGivesEveryTurnBack(t *testing.T) {
	s := newHostServer(t)
	tr := newTransport(t, s.base(), polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit),
		polite.WithLookup(loopback),
		polite.WithServerLimit(config.Limit{RequestsPerSecond: 1, Burst: 1}),
		polite.WithGlobalLimit(config.Limit{RequestsPerSecond: 1, Burst: 1}))
	client := &http.Client{Transport: tr}
	start := time.Now()
	fetchAll(t, client, []string{s.url("a.test", "/")})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	time.AfterFunc(300*time.Millisecond, cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url("b.test", "/"), nil)
	require.NoError(t, err)
	_, err = client.Do(req)
	var we *polite.WaitError
	require.ErrorAs(t, err, &we)
	assert.ErrorIs(t, err, context.Canceled)

	fetchAll(t, client, []string{s.url("c.test", "/")})
	c := s.at("c.test")
	require.Len(t, c, 1)
	assert.Less(t, c[0].Sub(start), 1700*time.Millisecond, "it took the turn at 1 s that the cancelled request gave back, not the one at 2 s")
	assert.Empty(t, s.at("b.test"))
	st, ok := tr.Stats("b.test")
	require.True(t, ok)
	assert.EqualValues(t, 1, st.CanceledRequests)
}

// TestGlobalLimitMaxConcurrentAlone checks that a global limit of
// max_concurrent alone caps the requests in flight across all domains and
// sets no pace of its own.
func TestGlobalLimitMaxConcurrentAlone(t *testing.T) {
	var now, most atomic.Int64
	base := baseFunc(func(req *http.Request) (*http.Response, error) {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(50 * time.Millisecond)
		now.Add(-1)
		return answer(req, http.StatusOK), nil
	})
	tr := newTransport(t, base, polite.WithDefault(fastLimit), polite.WithGlobalLimit(config.Limit{MaxConcurrent: 2}))
	limit, ok := tr.GlobalLimit()
	require.True(t, ok)
	assert.Equal(t, config.Limit{MaxConcurrent: 2}, limit, "nothing taken from the default")
	start := time.Now()
	var urls []string
	for i := range 6 {
		urls = append(urls, fmt.Sprintf("http://d%d.test/", i))
	}
	fetchAll(t, &http.Client{Transport: tr}, urls)
	assert.EqualValues(t, 2, most.Load(), "at most 2 in flight, across domains")
	assert.Less(t, time.Since(start), 2*time.Second, "no pace but the cap")
}

// TestScopesWaitRefusesATurnMovedPastMaxWait checks that a request waiting
// in its domain and the global scope, whose turn a Retry-After moves past
// WithMaxWait while it waits, is refused when the turn moves, as
// limiter.Wait refuses one waiting in its domain alone: it does not wait
// out the pause.
func TestScopesWaitRefusesATurnMovedPastMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			if calls.Add(1) > 1 {
				return answer(req, http.StatusOK), nil
			}
			time.Sleep(500 * time.Millisecond)
			resp := answer(req, http.StatusTooManyRequests)
			resp.Header.Set("Retry-After", "5")
			return resp, nil
		})
		tr := newTransport(t, base, polite.WithDefault(everySecond),
			polite.WithGlobalLimit(config.Limit{MaxConcurrent: 10}), polite.WithMaxWait(2*time.Second))
		first := make(chan error, 1)
		go func() {
			resp, err := tr.RoundTrip(get(t, context.Background(), "http://moved.example/1"))
			if err == nil {
				resp.Body.Close()
			}
			first <- err
		}()
		synctest.Wait()
		start := time.Now()
		resp, err := tr.RoundTrip(get(t, context.Background(), "http://moved.example/2"))
		if err == nil {
			resp.Body.Close()
		}
		require.NoError(t, <-first)
		assert.ErrorIs(t, err, limiter.ErrWaitTooLong, "the turn moved to 5.5s, past the 2s WithMaxWait")
		assert.Equal(t, time.Second, time.Since(start), "refused when its turn came and moved, not after the pause")
		assert.EqualValues(t, 1, calls.Load(), "only the first was sent")
	})
}
