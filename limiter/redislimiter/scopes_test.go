package redislimiter

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestScopesSharedThroughRedis runs two Transports, as two workers would,
// on one Redis, each with a server and a global scope, and checks from
// the server's side that the server's gap holds across both workers and
// all domains, and that the global scope counts every request: each
// scope is one Redis key, in its own hash slot, apart from the domains'.
func TestScopesSharedThroughRedis(t *testing.T) {
	const gap = 150 * time.Millisecond
	srv := redistest.Start(t)
	var mu sync.Mutex
	var arrivals []time.Time
	web := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
	}))
	t.Cleanup(web.Close)
	u, err := url.Parse(web.URL)
	require.NoError(t, err)
	base := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, u.Host)
	}}
	loopback := func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	var workers []*polite.Transport
	for range 2 {
		l, _ := newTestLimiter(t, srv)
		tr, err := polite.NewTransport(base, polite.WithLimiter(l), polite.WithKeyFunc(polite.HostKey),
			polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 1000}),
			polite.WithLookup(loopback),
			polite.WithServerLimit(config.Limit{MinDelay: gap}),
			polite.WithGlobalLimit(config.Limit{RequestsPerSecond: 100, Burst: 100, Quotas: []config.Quota{{Requests: 6, Window: time.Hour}}}))
		require.NoError(t, err)
		workers = append(workers, tr)
	}
	var wg sync.WaitGroup
	for _, tr := range workers {
		for _, host := range []string{"a", "b", "c"} {
			wg.Go(func() {
				resp, err := tr.RoundTrip(mustGet(t, "http://"+host+".test:"+u.Port()+"/"))
				if assert.NoError(t, err) {
					resp.Body.Close()
				}
			})
		}
	}
	wg.Wait()
	mu.Lock()
	got := slices.Clone(arrivals)
	mu.Unlock()
	require.Len(t, got, 6)
	slices.SortFunc(got, time.Time.Compare)
	for i := 1; i < len(got); i++ {
		// Generous: a request holds its scopes' turns in Redis one after
		// another, so on a loaded machine it may start some milliseconds
		// after its server's turn; without the server's scope, all six
		// would come at once.
		assert.GreaterOrEqual(t, got[i].Sub(got[i-1]), gap*2/3, "arrival %d: the server's gap holds across workers", i)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req := mustGet(t, "http://d.test:"+u.Port()+"/").WithContext(ctx)
	_, err = workers[0].RoundTrip(req)
	var we *polite.WaitError
	require.ErrorAs(t, err, &we, "the global quota of 6 an hour is used up by both workers")

	keys, err := newClient(t, srv).Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	assert.Contains(t, keys, "polite:{ip:127.0.0.1}:state", "the server's scope is its own key")
	assert.Contains(t, keys, "polite:{(global)}:state", "the global scope is its own key")
}

func mustGet(t *testing.T, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	return req
}

// TestSetLimitThroughRedis: a SetLimit that slows a domain paced through
// Redis takes effect at its next turn, counted from the last start.
func TestSetLimitThroughRedis(t *testing.T) {
	const gap = 300 * time.Millisecond
	srv := redistest.Start(t)
	l, _ := newTestLimiter(t, srv)
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	tr, err := polite.NewTransport(base, polite.WithLimiter(l), polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 1000}))
	require.NoError(t, err)
	send := func() time.Time {
		resp, err := tr.RoundTrip(mustGet(t, "http://a.test/"))
		require.NoError(t, err)
		resp.Body.Close()
		return time.Now()
	}
	for range 3 {
		send()
	}
	last := time.Now()
	require.NoError(t, tr.SetLimit("a.test", config.Limit{MinDelay: gap}))
	first := send()
	second := send()
	assert.GreaterOrEqual(t, first.Sub(last), gap-10*time.Millisecond, "the first turn after the change keeps the new gap")
	assert.GreaterOrEqual(t, second.Sub(first), gap-10*time.Millisecond)
}
