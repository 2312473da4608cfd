package frontier_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/frontier"
)

// baseFunc is an in-memory http.RoundTripper, usable inside a synctest
// bubble.
type baseFunc func(*http.Request) (*http.Response, error)

func (f baseFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func answer(req *http.Request) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: req}
}

// instant answers at once.
var instant = baseFunc(func(req *http.Request) (*http.Response, error) { return answer(req), nil })

func newTransport(t *testing.T, base http.RoundTripper, opts ...polite.Option) *polite.Transport {
	t.Helper()
	tr, err := polite.NewTransport(base, opts...)
	require.NoError(t, err)
	return tr
}

func get(t *testing.T, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	return req
}

func push(t *testing.T, f *frontier.Frontier, urls ...string) {
	t.Helper()
	for _, u := range urls {
		require.NoError(t, f.Push(get(t, u)))
	}
}

// send sends req through tr and closes the response body, which ends its
// flight.
func send(t *testing.T, tr *polite.Transport, req *http.Request) {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// handout is a request Next returned, and when.
type handout struct {
	url string
	at  time.Duration // since the test began
}

// TestNextOrdersByReadiness checks that Next hands out the request whose
// domain's turn comes first, and waits only when no turn has come.
func TestNextOrdersByReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, instant,
			polite.WithDefault(config.Limit{RequestsPerSecond: 1, Burst: 1}),
			polite.WithDomain("fast.test", config.Limit{RequestsPerSecond: 10, Burst: 1}),
			polite.WithDomain("burst.test", config.Limit{RequestsPerSecond: 1, Burst: 2}),
			polite.WithDomain("gap.test", config.Limit{MinDelay: 300 * time.Millisecond}))
		f := frontier.New(tr)
		push(t, f, "http://slow.test/1", "http://slow.test/2", "http://fast.test/1", "http://fast.test/2",
			"http://burst.test/1", "http://burst.test/2", "http://burst.test/3", "http://gap.test/1", "http://gap.test/2")
		start := time.Now()
		var got []handout
		for range 9 {
			req, err := f.Next(t.Context())
			require.NoError(t, err)
			got = append(got, handout{req.URL.String(), time.Since(start)})
			send(t, tr, req)
		}
		assert.Equal(t, []handout{
			{"http://slow.test/1", 0}, // every domain is ready: in the order they came
			{"http://fast.test/1", 0},
			{"http://burst.test/1", 0},
			{"http://gap.test/1", 0},
			{"http://burst.test/2", 0}, // its burst allows a second at once
			{"http://fast.test/2", 100 * time.Millisecond},
			{"http://gap.test/2", 300 * time.Millisecond},
			{"http://slow.test/2", time.Second},
			{"http://burst.test/3", time.Second}, // its bucket refills one turn per second
		}, got)
		assert.Zero(t, f.Len())
	})
}

// TestNextAsksTheTransport checks that Next asks the Transport
// rather than trusting its own estimate: a turn taken by a request that did
// not come through the Frontier, and a server's pause, delay the hand-out.
func TestNextAsksTheTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
			resp := answer(req)
			if req.URL.Path == "/busy" {
				resp.StatusCode = http.StatusServiceUnavailable
				resp.Header.Set("Retry-After", "5")
			}
			return resp, nil
		}), polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1}))
		f := frontier.New(tr)
		start := time.Now()
		send(t, tr, get(t, "http://a.test/direct")) // not through the Frontier
		push(t, f, "http://a.test/1", "http://b.test/busy", "http://b.test/2")
		req, err := f.Next(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "http://b.test/busy", req.URL.String(), "a.test's turn was taken: b.test goes first")
		send(t, tr, req) // b.test asks for 5 s of quiet
		req, err = f.Next(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "http://a.test/1", req.URL.String())
		assert.Equal(t, 500*time.Millisecond, time.Since(start), "a.test's turn, as the Transport keeps it")
		send(t, tr, req)
		req, err = f.Next(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "http://b.test/2", req.URL.String())
		assert.Equal(t, 5*time.Second, time.Since(start), "b.test's pause, not its pace")
		send(t, tr, req)
	})
}

// TestNextDoesNotTrustAnAnswerThatMissesAFlight checks that while a
// request is handed out and not yet sent, its domain's next request waits
// for the turn the limit says, though the Transport, which has not seen
// the first one yet, would answer that there is no wait.
func TestNextDoesNotTrustAnAnswerThatMissesAFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, instant, polite.WithDefault(config.Limit{RequestsPerSecond: 1, Burst: 1}))
		f := frontier.New(tr)
		push(t, f, "http://a.test/1", "http://a.test/2")
		start := time.Now()
		first, err := f.Next(t.Context())
		require.NoError(t, err)
		second, err := f.Next(t.Context()) // first is not sent yet
		require.NoError(t, err)
		assert.Equal(t, time.Second, time.Since(start))
		send(t, tr, first)
		send(t, tr, second)
	})
}

// pool runs workers that take requests from f and send them through
// client until Next fails, and returns when all have stopped.
func pool(f *frontier.Frontier, client *http.Client, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				req, err := f.Next(context.Background())
				if err != nil {
					return
				}
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
}

// inFlight counts the requests a base holds, per host, and the most it
// held at once.
type inFlight struct {
	mu      sync.Mutex
	now     map[string]int
	most    map[string]int
	doneAt  map[string]time.Duration // when the last response ended
	started time.Time
	events  []event
}

// event is a request starting (+1) or ending (-1) in the base.
type event struct {
	host  string
	at    time.Duration
	delta int
}

// mostWhile returns the most requests host had in the base at once before
// the instant the last request to other began. What began at that instant
// is left out: once other's last request is handed out, other has no work
// left and host may take more workers (see Frontier), and a request to
// host handed out right after it, at the same instant of the bubble's
// clock, may reach the base first.
func (c *inFlight) mostWhile(host, other string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var last time.Duration
	for _, e := range c.events {
		if e.host == other && e.delta > 0 {
			last = e.at
		}
	}
	n, most := 0, 0
	for _, e := range c.events {
		if e.at >= last {
			break // events are in the order of the clock
		}
		if e.host == host {
			n += e.delta
			most = max(most, n)
		}
	}
	return most
}

func newInFlight() *inFlight {
	return &inFlight{now: map[string]int{}, most: map[string]int{}, doneAt: map[string]time.Duration{}, started: time.Now()}
}

// base returns a base that holds each request for hold(host).
func (c *inFlight) base(hold func(host string) time.Duration) baseFunc {
	return func(req *http.Request) (*http.Response, error) {
		host := req.URL.Hostname()
		c.mu.Lock()
		c.now[host]++
		c.most[host] = max(c.most[host], c.now[host])
		c.events = append(c.events, event{host, time.Since(c.started), 1})
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			c.now[host]--
			c.doneAt[host] = time.Since(c.started)
			c.events = append(c.events, event{host, time.Since(c.started), -1})
			c.mu.Unlock()
		}()
		select {
		case <-time.After(hold(host)):
			return answer(req), nil
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

func TestMaxConcurrentIsRespected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newInFlight()
		tr := newTransport(t, c.base(func(string) time.Duration { return time.Second }),
			polite.WithDefault(config.Limit{RequestsPerSecond: 100, Burst: 10, MaxConcurrent: 2}))
		f := frontier.New(tr)
		for i := range 20 {
			push(t, f, fmt.Sprintf("http://capped.test/%d", i))
		}
		f.Close()
		pool(f, &http.Client{Transport: tr}, 8)
		assert.Equal(t, 2, c.most["capped.test"])
		assert.Equal(t, 10*time.Second, c.doneAt["capped.test"], "two at a time, a second each")
	})
}

// TestFairShareWithAHangingDomain is the case: a domain whose
// responses hang occupies no more than its share of the workers while a fast
// domain has work, so the fast domain's URLs take no longer than alone.
// The fast domain has work until its last request is handed out; then the
// hanging domain may take the free workers.
func TestFairShareWithAHangingDomain(t *testing.T) {
	const workers, timeout = 4, time.Minute
	run := func(t *testing.T, withHanging bool) (fastDone time.Duration, hangingMost int) {
		t.Helper()
		c := newInFlight()
		tr := newTransport(t, c.base(func(host string) time.Duration {
			if host == "hang.test" {
				return time.Hour
			}
			return 20 * time.Millisecond
		}), polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 1}))
		f := frontier.New(tr)
		for i := range 40 {
			if withHanging {
				push(t, f, fmt.Sprintf("http://hang.test/%d", i))
			}
			push(t, f, fmt.Sprintf("http://fast.test/%d", i))
		}
		f.Close()
		pool(f, &http.Client{Transport: tr, Timeout: timeout}, workers)
		return c.doneAt["fast.test"], c.mostWhile("hang.test", "fast.test")
	}
	var (
		alone, beside time.Duration
		most          int
	)
	synctest.Test(t, func(t *testing.T) { alone, _ = run(t, false) })
	synctest.Test(t, func(t *testing.T) { beside, most = run(t, true) })
	t.Logf("fast domain's 40 URLs: %v alone, %v beside a hanging domain (%d workers, responses hang until the %v timeout)", alone, beside, workers, timeout)
	assert.Equal(t, workers/2, most, "while the fast domain has work, the hanging domain occupies its share, no more")
	assert.Equal(t, 3900*time.Millisecond+20*time.Millisecond, alone, "39 gaps of 100 ms, then the last response")
	assert.Equal(t, alone, beside)
}

// TestMixedLimitsNoWorkerSleepsInRoundTrip runs a pool over domains with
// assorted limits and latencies, workers pushing more as they go: every
// request is handed out once, no domain exceeds its MaxConcurrent, and no
// request waits for its turn inside the Transport: the waits all happen
// in Next, where a worker can still take another domain's request.
func TestMixedLimitsNoWorkerSleepsInRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limits := []config.Limit{
			{RequestsPerSecond: 2, Burst: 1},
			{RequestsPerSecond: 5, Burst: 3},
			{RequestsPerSecond: 10, Burst: 1, MaxConcurrent: 1},
			{MinDelay: 300 * time.Millisecond},
			{RequestsPerSecond: 20, Burst: 5, MaxConcurrent: 2},
			{RequestsPerSecond: 1, Burst: 2, MinDelay: 200 * time.Millisecond},
		}
		var opts []polite.Option
		for i, l := range limits {
			opts = append(opts, polite.WithDomain(fmt.Sprintf("d%d.test", i), l))
		}
		c := newInFlight()
		tr := newTransport(t, c.base(func(host string) time.Duration {
			return time.Duration(len(host)*7%5+1) * 40 * time.Millisecond
		}), opts...)
		f := frontier.New(tr)
		const perDomain, found = 12, 3
		for i := range perDomain * len(limits) {
			push(t, f, fmt.Sprintf("http://d%d.test/%d", i%len(limits), i))
		}
		var (
			mu         sync.Mutex
			seen       = map[string]int{}
			discovered atomic.Int64
			pending    sync.WaitGroup // found requests not pushed yet
			workers    sync.WaitGroup
		)
		pending.Add(found * len(limits))
		for range 6 {
			workers.Go(func() {
				for req, err := f.Next(t.Context()); err == nil; req, err = f.Next(t.Context()) {
					mu.Lock()
					seen[req.URL.String()]++
					mu.Unlock()
					if !strings.HasSuffix(req.URL.Path, "/found") && discovered.Add(1) <= found*int64(len(limits)) {
						push(t, f, req.URL.String()+"/found")
						pending.Done()
					}
					send(t, tr, req)
				}
			})
		}
		pending.Wait()
		f.Close()
		workers.Wait()
		assert.Len(t, seen, (perDomain+found)*len(limits))
		for u, n := range seen {
			assert.Equal(t, 1, n, u)
		}
		for i, l := range limits {
			host := fmt.Sprintf("d%d.test", i)
			if l.MaxConcurrent > 0 {
				assert.LessOrEqual(t, c.most[host], l.MaxConcurrent, host)
			}
			s, ok := tr.Stats(host)
			require.True(t, ok)
			assert.Zero(t, s.DelayedRequests, "%s: requests waited in RoundTrip", host)
		}
	})
}

func TestCloseDrainsThenEOF(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, instant, polite.WithDefault(config.Limit{RequestsPerSecond: 1, Burst: 1}))
		f := frontier.New(tr)
		push(t, f, "http://a.test/1", "http://a.test/2", "http://b.test/1")
		idle := make(chan error)
		go func() { // a worker blocked on an empty Frontier sees Close too
			f2 := frontier.New(tr)
			go func() { time.Sleep(time.Second); f2.Close() }()
			_, err := f2.Next(context.Background())
			idle <- err
		}()
		f.Close()
		err := f.Push(get(t, "http://a.test/3"))
		require.Error(t, err)
		assert.ErrorIs(t, err, net.ErrClosed)
		var got []string
		for {
			req, err := f.Next(t.Context())
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			got = append(got, req.URL.Path+"@"+req.URL.Host)
			send(t, tr, req)
		}
		assert.Equal(t, []string{"/1@a.test", "/1@b.test", "/2@a.test"}, got)
		_, err = f.Next(t.Context())
		assert.ErrorIs(t, err, io.EOF, "and again")
		assert.ErrorIs(t, <-idle, io.EOF)
	})
}

func TestNextEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, instant, polite.WithDefault(config.Limit{RequestsPerSecond: 1, Burst: 1}))
		f := frontier.New(tr)

		ctx, cancel := context.WithCancel(t.Context())
		go func() { time.Sleep(time.Second); cancel() }()
		_, err := f.Next(ctx)
		assert.ErrorIs(t, err, context.Canceled, "nothing pushed")

		push(t, f, "http://a.test/1", "http://a.test/2")
		req, err := f.Next(t.Context())
		require.NoError(t, err)
		send(t, tr, req)
		ctx, cancel = context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = f.Next(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "waiting for a.test's turn")
		assert.Equal(t, 100*time.Millisecond, time.Since(start))

		req, err = f.Next(t.Context())
		require.NoError(t, err, "the request is still there")
		assert.Equal(t, "/2", req.URL.Path)
		send(t, tr, req)
	})
}

// TestUnsentRequestEndsWithItsContext checks that a request handed out and
// never sent stops counting against its domain once its context is done.
func TestUnsentRequestEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, instant, polite.WithDefault(config.Limit{RequestsPerSecond: 100, Burst: 10, MaxConcurrent: 1}))
		f := frontier.New(tr)
		ctx, cancel := context.WithCancel(t.Context())
		first, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://a.test/1", nil)
		require.NoError(t, err)
		require.NoError(t, f.Push(first))
		push(t, f, "http://a.test/2")
		req, err := f.Next(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "/1", req.URL.Path)
		go func() { time.Sleep(time.Second); cancel() }()
		start := time.Now()
		req, err = f.Next(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "/2", req.URL.Path)
		assert.Equal(t, time.Second, time.Since(start), "held until the first one's context ended")
		send(t, tr, req)
	})
}

func TestPushRefusesWhatTheTransportCannotKey(t *testing.T) {
	f := frontier.New(newTransport(t, instant))
	err := f.Push(&http.Request{Method: http.MethodGet, URL: nil})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "frontier: "), err.Error())
	assert.Zero(t, f.Len())
	require.NoError(t, f.Push(get(t, "file:///etc/hosts")), "a URL with no host goes unpaced, as the Transport sends it")
	assert.Equal(t, 1, f.Len())
}

// TestConcurrentPushAndNext runs pushers and pullers at once, workers
// pushing what they "discover", under the race detector: every request is
// handed out exactly once.
func TestConcurrentPushAndNext(t *testing.T) {
	tr := newTransport(t, instant, polite.WithDefault(config.Limit{Disabled: true}))
	f := frontier.New(tr)
	const pushers, perPusher, workers = 4, 500, 8
	var (
		mu     sync.Mutex
		seen   = map[string]int{}
		pushed sync.WaitGroup
		found  atomic.Int64 // workers that chose to push one
		pushes atomic.Int64 // of those, pushed
	)
	for p := range pushers {
		pushed.Go(func() {
			for i := range perPusher {
				require.NoError(t, f.Push(get(t, fmt.Sprintf("http://d%d.test/%d/%d", i%37, p, i))))
			}
		})
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				req, err := f.Next(context.Background())
				if err != nil {
					assert.ErrorIs(t, err, io.EOF)
					return
				}
				mu.Lock()
				seen[req.URL.String()]++
				mu.Unlock()
				if !strings.HasPrefix(req.URL.Path, "/found/") && found.Add(1) <= 200 {
					assert.NoError(t, f.Push(get(t, "http://found.test/found"+req.URL.Path)))
					pushes.Add(1)
				}
				send(t, tr, req)
			}
		})
	}
	pushed.Wait()
	require.Eventually(t, func() bool { return pushes.Load() == 200 && f.Len() == 0 }, 30*time.Second, time.Millisecond)
	f.Close()
	wg.Wait()
	assert.Len(t, seen, pushers*perPusher+200)
	for u, n := range seen {
		if n != 1 {
			t.Errorf("%s handed out %d times", u, n)
		}
	}
}

// TestScopesNoWorkerSleepsInRoundTrip checks that Next honours the
// server and global scopes as well as each domain's limit: domains whose
// own limits are fast, three of them on one server, all under a global
// limit, are handed out so that no request waits in RoundTrip.
func TestScopesNoWorkerSleepsInRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
			if strings.HasPrefix(host, "shared") {
				return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
			}
			return []netip.Addr{netip.AddrFrom4([4]byte{192, 0, 2, host[0]})}, nil // one each
		}
		tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
			time.Sleep(20 * time.Millisecond)
			return answer(req), nil
		}), polite.WithDefault(config.Limit{RequestsPerSecond: 100, Burst: 10}),
			polite.WithLookup(lookup),
			polite.WithServerLimit(config.Limit{MinDelay: 400 * time.Millisecond}),
			polite.WithGlobalLimit(config.Limit{RequestsPerSecond: 10, Burst: 1}))
		f := frontier.New(tr)
		hosts := []string{"shared1.test", "shared2.test", "shared3.test", "a.test", "b.test", "c.test"}
		for i := range 5 * len(hosts) {
			push(t, f, fmt.Sprintf("http://%s/%d", hosts[i%len(hosts)], i))
		}
		f.Close()
		pool(f, &http.Client{Transport: tr}, 6)
		for _, host := range hosts {
			s, ok := tr.Stats(host)
			require.True(t, ok)
			assert.EqualValues(t, 5, s.TotalRequests, host)
			assert.Zero(t, s.DelayedRequests, "%s: requests waited in RoundTrip", host)
		}
	})
}

// TestNextAsksAgainAfterAFlightEnds is a check made while a request is in
// flight going stale: the first request's robots.txt fetch takes the
// domain's turn at 0, so the request itself goes at 0.5 s, and its answer,
// 100 ms later, pauses the domain for 2 s (a 429 with Retry-After: 2);
// meanwhile, at 0.5 s, Next asked the domain's wait and was told of a
// turn at 1 s. The next request is handed out when the pause ends, not at 1 s,
// where it would wait in RoundTrip for the rest of the pause.
func TestNextAsksAgainAfterAFlightEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			resp := answer(req)
			switch req.URL.Path {
			case "/robots.txt":
				resp.StatusCode = http.StatusNotFound
			case "/1":
				time.Sleep(100 * time.Millisecond)
				resp.StatusCode = http.StatusTooManyRequests
				resp.Header.Set("Retry-After", "2")
			}
			return resp, nil
		})
		tr := newTransport(t, base, polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1}), polite.WithRobots("testbot"))
		f := frontier.New(tr)
		push(t, f, "http://a.test/1", "http://a.test/2")
		f.Close()
		start := time.Now()
		var mu sync.Mutex
		var got []handout
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for req, err := f.Next(context.Background()); err == nil; req, err = f.Next(context.Background()) {
					mu.Lock()
					got = append(got, handout{req.URL.Path, time.Since(start)})
					mu.Unlock()
					send(t, tr, req)
				}
			})
		}
		wg.Wait()
		require.Len(t, got, 2)
		assert.Equal(t, "/2", got[1].url)
		assert.GreaterOrEqual(t, got[1].at, 2600*time.Millisecond, "handed out when the pause ends, at 2.6 s")
	})
}
