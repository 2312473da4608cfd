package polite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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
	"github.com/polite-go/polite/limiter"
)

// baseFunc is an in-memory http.RoundTripper, usable inside a synctest
// bubble where real network I/O is not.
type baseFunc func(*http.Request) (*http.Response, error)

func (f baseFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// answer is what a well-behaved base does: it consumes the request body
// and answers with status.
func answer(req *http.Request, status int) *http.Response {
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: status,
		Status:     http.StatusText(status),
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{},
		Body:    io.NopCloser(strings.NewReader("body")),
		Request: req,
	}
}

// countingBase answers 200 and counts the requests it was given.
func countingBase(calls *atomic.Int64) baseFunc {
	return func(req *http.Request) (*http.Response, error) {
		calls.Add(1)
		return answer(req, http.StatusOK), nil
	}
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	return nil
}

func newTransport(t *testing.T, base http.RoundTripper, opts ...polite.Option) *polite.Transport {
	t.Helper()
	tr, err := polite.NewTransport(base, opts...)
	require.NoError(t, err)
	return tr
}

// get builds a GET request for rawURL under ctx.
func get(t *testing.T, ctx context.Context, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	return req
}

// roundTrip sends a GET through rt and closes the response body.
func roundTrip(t *testing.T, rt http.RoundTripper, ctx context.Context, rawURL string) error {
	t.Helper()
	resp, err := rt.RoundTrip(get(t, ctx, rawURL))
	if err != nil {
		require.Nil(t, resp, "a RoundTripper returns a response or an error, never both")
		return err
	}
	require.NotNil(t, resp, "a RoundTripper never returns nil, nil")
	resp.Body.Close()
	return nil
}

var (
	everySecond = config.Limit{RequestsPerSecond: 1, Burst: 1}
	everyHour   = config.Limit{MinDelay: time.Hour}
	fastLimit   = config.Limit{RequestsPerSecond: 1e6, Burst: 1000}
)

func TestTransportClosesRequestBodyOnEveryErrorPath(t *testing.T) {
	errKey := errors.New("no key for you")
	errBase := errors.New("connection refused")
	tests := []struct {
		name  string
		opts  []polite.Option
		base  func(req *http.Request) (*http.Response, error)
		url   string
		prep  func(t *testing.T, tr *polite.Transport)     // requests sent before the one under test
		ctx   func() (context.Context, context.CancelFunc) // the context of the request under test
		sent  int64                                        // requests the base saw in all
		check func(t *testing.T, err error)
	}{
		{
			name: "key function error for a URL with no host",
			url:  "http:///path",
			opts: []polite.Option{polite.WithKeyFunc(func(*http.Request) (string, error) { return "", errBase })},
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, errBase)
			},
		},
		{
			name: "key function error",
			opts: []polite.Option{polite.WithKeyFunc(func(*http.Request) (string, error) { return "", errKey })},
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, errKey)
			},
		},
		{
			name: "context cancelled before the call",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, context.Canceled)
			},
		},
		{
			name: "wait cancelled",
			opts: []polite.Option{polite.WithDefault(everyHour)},
			prep: sendOne,
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			},
			sent: 1,
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, context.Canceled)
			},
		},
		{
			name: "deadline that cannot be met",
			opts: []polite.Option{polite.WithDefault(everyHour)},
			prep: sendOne,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Minute)
			},
			sent: 1,
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			},
		},
		{
			name: "wait longer than WithMaxWait",
			opts: []polite.Option{polite.WithDefault(everyHour), polite.WithMaxWait(time.Minute)},
			prep: sendOne,
			sent: 1,
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, limiter.ErrWaitTooLong)
			},
		},
		{
			name: "wait for a concurrency slot cancelled",
			opts: []polite.Option{polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10, MaxConcurrent: 1})},
			prep: func(t *testing.T, tr *polite.Transport) {
				resp, err := tr.RoundTrip(get(t, context.Background(), "http://example.com/"))
				require.NoError(t, err)
				t.Cleanup(func() { resp.Body.Close() }) // holds the only slot until the end
			},
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			sent: 1,
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			},
		},
		{
			name: "limiter error",
			opts: []polite.Option{polite.WithLimiter(deadStore{})},
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, errStoreDown)
				assert.ErrorContains(t, err, "polite: example.com: limiter: ")
			},
		},
		{
			name: "base error",
			base: func(req *http.Request) (*http.Response, error) {
				req.Body.Close() // the base owns the body once it has it
				return nil, errBase
			},
			sent: 1,
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, errBase)
			},
		},
		{
			name: "base returns a response and an error",
			base: func(req *http.Request) (*http.Response, error) {
				return answer(req, http.StatusOK), errBase
			},
			sent: 1,
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, errBase)
			},
		},
		{
			name: "base returns neither",
			base: func(req *http.Request) (*http.Response, error) {
				req.Body.Close()
				return nil, nil
			},
			sent: 1,
			check: func(t *testing.T, err error) {
				assert.ErrorContains(t, err, "no response")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int64
			base := countingBase(&calls)
			if tt.base != nil {
				base = func(req *http.Request) (*http.Response, error) {
					calls.Add(1)
					return tt.base(req)
				}
			}
			tr := newTransport(t, base, tt.opts...)
			if tt.prep != nil {
				tt.prep(t, tr)
			}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			rawURL := "http://example.com/upload"
			if tt.url != "" {
				rawURL = tt.url
			}
			body := &closeCounter{Reader: strings.NewReader("payload")}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, body)
			require.NoError(t, err)

			resp, err := tr.RoundTrip(req)

			require.Error(t, err)
			assert.Nil(t, resp, "never both a response and an error")
			assert.Equal(t, int32(1), body.closes.Load(), "request body closed exactly once")
			assert.Equal(t, tt.sent, calls.Load(), "requests the base saw")
			tt.check(t, err)
		})
	}
}

// deadStore is a Limiter whose store does not answer, as a shared
// limiter fails closed when its Redis is down.
type deadStore struct{}

var errStoreDown = errors.New("store down")

func (deadStore) Reserve(context.Context, limiter.Request) (limiter.Reservation, error) {
	return limiter.Reservation{}, errStoreDown
}

func (deadStore) Observe(context.Context, limiter.Request, limiter.Observation) (time.Duration, error) {
	return 0, errStoreDown
}

func (deadStore) State(context.Context, limiter.Request) (limiter.State, error) {
	return limiter.State{}, errStoreDown
}

// sendOne sends one request to example.com, taking its domain's turn.
func sendOne(t *testing.T, tr *polite.Transport) {
	require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/first"))
}

func TestTransportDoesNotModifyTheRequest(t *testing.T) {
	for _, refused := range []bool{false, true} {
		t.Run(map[bool]string{false: "sent", true: "refused"}[refused], func(t *testing.T) {
			var seen *http.Request
			tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
				seen = req
				return answer(req, http.StatusOK), nil
			}), polite.WithDefault(everyHour), polite.WithMaxWait(time.Second))
			if refused {
				sendOne(t, tr)
			}
			ctx := context.WithValue(context.Background(), ctxKey{}, "mine")
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, "https://user:pw@WWW.Example.COM:8443/a%20b?q=1#frag", strings.NewReader("x"))
			require.NoError(t, err)
			req.Host = "virtual.example.org"
			req.Header.Set("User-Agent", "polite-test")
			req.Header.Add("Accept", "text/html")
			req.Header.Add("Accept", "application/json")
			req.Trailer = http.Header{"X-Sum": nil}
			wantHeader, wantTrailer, wantURL := req.Header.Clone(), req.Trailer.Clone(), *req.URL
			wantUser := *req.URL.User
			wantHost, wantMethod, wantLength := req.Host, req.Method, req.ContentLength

			resp, err := tr.RoundTrip(req)
			if refused {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				resp.Body.Close()
				assert.Same(t, req, seen, "the base gets the caller's request itself")
			}

			assert.Equal(t, wantHeader, req.Header)
			assert.Equal(t, wantTrailer, req.Trailer)
			assert.Equal(t, wantURL, *req.URL)
			assert.Equal(t, wantUser, *req.URL.User)
			assert.Equal(t, wantHost, req.Host)
			assert.Equal(t, wantMethod, req.Method)
			assert.Equal(t, wantLength, req.ContentLength)
			assert.Equal(t, ctx, req.Context())
		})
	}
}

func TestTransportReturnsEveryResponseAsIs(t *testing.T) {
	for _, status := range []int{200, 204, 301, 404, 429, 500, 503} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
				return answer(req, status), nil
			}), polite.WithDefault(fastLimit))

			resp, err := tr.RoundTrip(get(t, context.Background(), "http://example.com/"))

			require.NoError(t, err, "a response is not an error, whatever its status")
			require.NotNil(t, resp)
			assert.Equal(t, status, resp.StatusCode)
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, "body", string(b))
			require.NoError(t, resp.Body.Close())
			s, ok := tr.Stats("example.com")
			require.True(t, ok)
			assert.Equal(t, int64(1), s.Responses[status/100])
			assert.Equal(t, int64(0), s.InFlight)
		})
	}
}

func TestTransportBaseFailures(t *testing.T) {
	errBase := errors.New("reset by peer")
	tests := []struct {
		name string
		base baseFunc
		want error
	}{
		{"error", func(*http.Request) (*http.Response, error) { return nil, errBase }, errBase},
		{"response and error", func(req *http.Request) (*http.Response, error) { return answer(req, 502), errBase }, errBase},
		{"neither", func(*http.Request) (*http.Response, error) { return nil, nil }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fail atomic.Bool
			fail.Store(true)
			var respBody *closeCounter
			tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
				if !fail.Load() {
					return answer(req, http.StatusOK), nil
				}
				resp, err := tt.base(req)
				if resp != nil {
					respBody = &closeCounter{Reader: resp.Body}
					resp.Body = respBody
				}
				return resp, err
			}), polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10, MaxConcurrent: 1}))

			resp, err := tr.RoundTrip(get(t, context.Background(), "http://example.com/"))

			require.Error(t, err)
			assert.Nil(t, resp)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			}
			if respBody != nil {
				assert.Equal(t, int32(1), respBody.closes.Load(), "the dropped response's body is closed")
			}
			s, ok := tr.Stats("example.com")
			require.True(t, ok)
			assert.Equal(t, int64(1), s.TotalRequests)
			assert.Equal(t, int64(1), s.FailedRequests)
			assert.Equal(t, int64(0), s.InFlight)

			// The failed round trip gave its only slot back.
			fail.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			assert.NoError(t, roundTrip(t, tr, ctx, "http://example.com/"))
		})
	}
}

func TestTransportBasePanicGivesBackItsSlot(t *testing.T) {
	var panicking atomic.Bool
	panicking.Store(true)
	tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
		if panicking.Load() {
			panic("bug in the base")
		}
		return answer(req, http.StatusOK), nil
	}), polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10, MaxConcurrent: 1}))

	assert.PanicsWithValue(t, "bug in the base", func() {
		_, _ = tr.RoundTrip(get(t, context.Background(), "http://example.com/"))
	}, "the panic goes on up to the caller")

	s, ok := tr.Stats("example.com")
	require.True(t, ok)
	assert.Equal(t, int64(1), s.FailedRequests)
	assert.Equal(t, int64(0), s.InFlight)
	panicking.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	assert.NoError(t, roundTrip(t, tr, ctx, "http://example.com/"), "the domain's only slot was given back")
}

// idleCloser counts CloseIdleConnections calls.
type idleCloser struct {
	baseFunc
	closes atomic.Int32
}

func (c *idleCloser) CloseIdleConnections() { c.closes.Add(1) }

func TestTransportForwardsCloseIdleConnections(t *testing.T) {
	base := &idleCloser{baseFunc: countingBase(new(atomic.Int64))}
	tr := newTransport(t, base)
	tr.CloseIdleConnections()
	assert.Equal(t, int32(1), base.closes.Load())

	client := &http.Client{Transport: tr}
	client.CloseIdleConnections()
	assert.Equal(t, int32(2), base.closes.Load(), "http.Client reaches the base through polite")

	bare := newTransport(t, countingBase(new(atomic.Int64)))
	assert.NotPanics(t, bare.CloseIdleConnections, "a base without the method is fine")
}

func TestTransportNilBaseIsDefaultTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	tr := newTransport(t, nil)

	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)

	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
}

func TestTransportKeysOnURLNotHost(t *testing.T) {
	tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithDefault(fastLimit))
	req := get(t, context.Background(), "http://www.example.com/")
	req.Host = "other.example.org"

	resp, err := tr.RoundTrip(req)

	require.NoError(t, err)
	resp.Body.Close()
	s, ok := tr.Stats("example.com")
	require.True(t, ok)
	assert.Equal(t, int64(1), s.TotalRequests)
	_, ok = tr.Stats("example.org")
	assert.False(t, ok, "req.Host only overrides the Host header")
}

func TestTransportPacesEachRedirectHopAgainstItsOwnDomain(t *testing.T) {
	var hits sync.Map
	count := func(name string) {
		n, _ := hits.LoadOrStore(name, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count("target")
		io.WriteString(w, "arrived")
	}))
	defer target.Close()
	u, err := url.Parse(target.URL)
	require.NoError(t, err)
	u.Host = "localhost:" + u.Port() // the same server under another host name
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count("origin")
		http.Redirect(w, r, u.String()+"/landing", http.StatusFound)
	}))
	defer origin.Close()
	require.Contains(t, origin.URL, "127.0.0.1")

	// One request an hour per host: a hop paced against the wrong host
	// could not go before the client's deadline and would fail at once.
	tr := newTransport(t, nil, polite.WithKeyFunc(polite.HostKey), polite.WithDefault(everyHour))
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}

	resp, err := client.Get(origin.URL + "/start")

	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "arrived", string(b))
	for _, host := range []string{"127.0.0.1", "localhost"} {
		s, ok := tr.Stats(host)
		require.True(t, ok, host)
		assert.Equal(t, int64(1), s.TotalRequests, host)
		assert.Equal(t, int64(0), s.InFlight, host)
	}

	// Both hosts are now paced: the next visit cannot go before the deadline.
	start := time.Now()
	_, err = client.Get(origin.URL + "/again")
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second, "a deadline that cannot be met fails at once")
	n, _ := hits.Load("origin")
	assert.Equal(t, int64(1), n.(*atomic.Int64).Load(), "nothing is sent for a failed wait")
}

func TestTransportCancelEndsWaitAtOnce(t *testing.T) {
	var calls atomic.Int64
	tr := newTransport(t, countingBase(&calls), polite.WithDefault(config.Limit{MinDelay: 10 * time.Second}))
	sendOne(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := make(chan time.Time, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancelled <- time.Now()
		cancel()
	}()
	start := time.Now()

	err := roundTrip(t, tr, ctx, "http://example.com/second")

	returned := time.Now()
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	var we *polite.WaitError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, "example.com", we.Domain)
	assert.WithinDuration(t, start.Add(10*time.Second), we.RetryAt, 2*time.Second)
	assert.Less(t, returned.Sub(<-cancelled), 500*time.Millisecond, "a cancelled wait ends at once")
	assert.Less(t, returned.Sub(start), 5*time.Second)
	assert.Equal(t, int64(1), calls.Load(), "nothing is sent for a cancelled wait")
	s, _ := tr.Stats("example.com")
	assert.Equal(t, int64(1), s.TotalRequests)
	assert.Equal(t, int64(1), s.CanceledRequests)
}

func TestTransportClientTimeout(t *testing.T) {
	t.Run("wait that cannot end in time fails at once", func(t *testing.T) {
		var calls atomic.Int64
		tr := newTransport(t, countingBase(&calls), polite.WithDefault(config.Limit{MinDelay: 10 * time.Second}))
		client := &http.Client{Transport: tr, Timeout: 3 * time.Second}
		resp, err := client.Get("http://example.com/one")
		require.NoError(t, err)
		resp.Body.Close()
		start := time.Now()

		_, err = client.Get("http://example.com/two")

		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		var we *polite.WaitError
		assert.ErrorAs(t, err, &we)
		assert.Less(t, time.Since(start), 2*time.Second, "refused before the timeout, not at it")
		assert.Equal(t, int64(1), calls.Load())
	})
	t.Run("wait for a slot ends at the timeout", func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10, MaxConcurrent: 1}))
		client := &http.Client{Transport: tr, Timeout: 100 * time.Millisecond}
		held, err := client.Get("http://example.com/one")
		require.NoError(t, err)
		defer held.Body.Close()
		start := time.Now()

		_, err = client.Get("http://example.com/two")

		require.Error(t, err)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 5*time.Second)
	})
	t.Run("wait shorter than the timeout succeeds", func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithDefault(config.Limit{MinDelay: 100 * time.Millisecond}))
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		for range 2 {
			resp, err := client.Get("http://example.com/")
			require.NoError(t, err)
			resp.Body.Close()
		}
		s, _ := tr.Stats("example.com")
		assert.Equal(t, int64(2), s.TotalRequests)
		assert.Equal(t, int64(1), s.DelayedRequests)
	})
}

func TestTransportDeadlineThatCannotBeMetFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		tr := newTransport(t, countingBase(&calls), polite.WithDefault(config.Limit{MinDelay: 10 * time.Second}))
		sendOne(t, tr)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 9*time.Second)
		defer cancel()

		err := roundTrip(t, tr, ctx, "http://example.com/second")

		assert.Equal(t, time.Duration(0), time.Since(start), "refused without waiting")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		var we *polite.WaitError
		require.ErrorAs(t, err, &we)
		assert.Equal(t, "example.com", we.Domain)
		assert.Equal(t, start.Add(10*time.Second), we.RetryAt)
		assert.Equal(t, int64(1), calls.Load(), "nothing is sent")
		assert.Equal(t, 10*time.Second, tr.RemainingWait("example.com"), "nothing is consumed")

		// A deadline the wait can meet is kept.
		ctx, cancel = context.WithTimeout(context.Background(), 11*time.Second)
		defer cancel()
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/third"))
		assert.Equal(t, 10*time.Second, time.Since(start))
	})
}

func TestTransportCancelledWaitGivesBackItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		tr := newTransport(t, countingBase(&calls), polite.WithDefault(everySecond))
		start := time.Now()
		sendOne(t, tr)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)

		err := roundTrip(t, tr, ctx, "http://example.com/cancelled")

		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "the wait ends when the context does")
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/next"))
		assert.Equal(t, time.Second, time.Since(start), "the next request takes the cancelled turn, not the one after")
		assert.Equal(t, int64(2), calls.Load())
	})
}

func TestTransportMaxWaitRefusesAtOnceConsumingNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		tr := newTransport(t, countingBase(&calls), polite.WithDefault(everySecond), polite.WithMaxWait(500*time.Millisecond))
		start := time.Now()
		sendOne(t, tr)

		err := roundTrip(t, tr, context.Background(), "http://example.com/refused")

		assert.ErrorIs(t, err, limiter.ErrWaitTooLong)
		var we *polite.WaitError
		require.ErrorAs(t, err, &we)
		assert.Equal(t, start.Add(time.Second), we.RetryAt)
		assert.Equal(t, time.Duration(0), time.Since(start))
		assert.Equal(t, time.Second, tr.RemainingWait("example.com"), "the refusal consumed nothing")
		s, _ := tr.Stats("example.com")
		assert.Equal(t, int64(1), s.CanceledRequests)

		time.Sleep(600 * time.Millisecond)
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/within"))
		assert.Equal(t, time.Second, time.Since(start), "a wait under the cap is kept")
		assert.Equal(t, int64(2), calls.Load())
	})
}

func TestTransportWithoutOptionsPacesOneRequestPerSecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)))
		start := time.Now()
		for i := range 3 {
			require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
			assert.Equal(t, time.Duration(i)*time.Second, time.Since(start), "request %d", i)
		}
		// Another domain has its own pace.
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.org/"))
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}

func TestTransportSlotIsReleased(t *testing.T) {
	oneAtATime := polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10, MaxConcurrent: 1})
	synctest.Test(t, func(t *testing.T) {
		var fail atomic.Bool
		tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
			if fail.Load() {
				return nil, errors.New("refused")
			}
			return answer(req, http.StatusOK), nil
		}), oneAtATime)
		ctx := context.Background()
		slotFree := func() bool {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			resp, err := tr.RoundTrip(get(t, ctx, "http://example.com/probe"))
			if err != nil {
				return false
			}
			resp.Body.Close()
			return true
		}

		held, err := tr.RoundTrip(get(t, ctx, "http://example.com/held"))
		require.NoError(t, err)
		start := time.Now()
		assert.False(t, slotFree(), "the open body holds the slot")
		assert.Equal(t, time.Second, time.Since(start), "the slot wait lasts until the deadline")

		// A waiter blocked on the slot gets it when the body is closed.
		got := make(chan time.Duration)
		go func() {
			start := time.Now()
			resp, err := tr.RoundTrip(get(t, ctx, "http://example.com/waiter"))
			if assert.NoError(t, err) {
				resp.Body.Close()
			}
			got <- time.Since(start)
		}()
		time.Sleep(3 * time.Second)
		require.NoError(t, held.Body.Close())
		assert.Equal(t, 3*time.Second, <-got)

		require.NoError(t, held.Body.Close(), "closing twice is harmless")
		assert.True(t, slotFree(), "closing twice released one slot, not two")
		fail.Store(true)
		assert.False(t, slotFree(), "base error")
		fail.Store(false)
		start = time.Now()
		assert.True(t, slotFree(), "a failed round trip released its slot")
		assert.Less(t, time.Since(start), time.Second)
		s, _ := tr.Stats("example.com")
		assert.Equal(t, int64(0), s.InFlight)
	})
}

func TestTransportLogging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		tr := newTransport(t, countingBase(new(atomic.Int64)),
			polite.WithLogger(logger),
			polite.WithDefault(config.Limit{RequestsPerSecond: 2, Burst: 1}),
			polite.WithDomain("example.com", config.Limit{MinDelay: 1500 * time.Millisecond, Quotas: []config.Quota{{Requests: 30, Window: time.Hour}}}),
		)
		type line struct {
			Level, Msg, Domain, Rule string
			Wait                     time.Duration
			Rate                     float64
			MinDelay                 time.Duration `json:"min_delay"`
			Quotas                   int
		}
		lines := func() []line {
			var out []line
			dec := json.NewDecoder(&buf)
			for dec.More() {
				var l line
				require.NoError(t, dec.Decode(&l))
				out = append(out, l)
			}
			return out
		}

		info := lines()
		require.Len(t, info, 2, "one line per limit in force")
		byDomain := map[string]line{}
		for _, l := range info {
			assert.Equal(t, "INFO", l.Level)
			byDomain[l.Domain] = l
		}
		assert.Equal(t, 2.0, byDomain["default"].Rate)
		assert.Equal(t, 1500*time.Millisecond, byDomain["example.com"].MinDelay)
		assert.Equal(t, 1, byDomain["example.com"].Quotas)

		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
		assert.Empty(t, lines(), "no line for a request that does not wait")
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))

		debug := lines()
		require.Len(t, debug, 1)
		assert.Equal(t, "DEBUG", debug[0].Level)
		assert.Equal(t, "example.com", debug[0].Domain)
		assert.Equal(t, 1500*time.Millisecond, debug[0].Wait)
		assert.Equal(t, "min_delay", debug[0].Rule)
	})
}

func TestTransportManyGoroutinesManyDomains(t *testing.T) {
	const (
		goroutines = 200
		perG       = 25
		domains    = 2000
	)
	var calls atomic.Int64
	tr := newTransport(t, countingBase(&calls), polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 5}))
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				u := fmt.Sprintf("http://www.site%d.com/%d", (g*perG+i*97)%domains, i)
				if !assert.NoError(t, roundTrip(t, tr, context.Background(), u)) {
					return
				}
			}
		})
	}
	wg.Wait()
	all := tr.AllStats()
	assert.Len(t, all, domains)
	var total int64
	for d, s := range all {
		total += s.TotalRequests
		assert.Zero(t, s.InFlight, d)
		assert.Zero(t, s.CanceledRequests, d)
	}
	assert.Equal(t, int64(goroutines*perG), total)
	assert.Equal(t, int64(goroutines*perG), calls.Load())
}

func TestTransportNeverExceedsMaxConcurrent(t *testing.T) {
	const limit = 3
	var inFlight, peak atomic.Int64
	tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		resp := answer(req, http.StatusOK)
		resp.Body = &onClose{ReadCloser: resp.Body, f: func() { inFlight.Add(-1) }}
		return resp, nil
	}), polite.WithDefault(config.Limit{RequestsPerSecond: 1e6, Burst: 1000, MaxConcurrent: limit}))
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				resp, err := tr.RoundTrip(get(t, context.Background(), "http://example.com/"))
				if !assert.NoError(t, err) {
					return
				}
				time.Sleep(100 * time.Microsecond) // read the body
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int64(limit))
	assert.Equal(t, int64(limit), peak.Load(), "50 goroutines did fill every place")
	s, _ := tr.Stats("example.com")
	assert.Equal(t, int64(1000), s.TotalRequests)
	assert.Zero(t, s.InFlight)
}

// onClose calls f when the body is closed the first time.
type onClose struct {
	io.ReadCloser
	once sync.Once
	f    func()
}

func (b *onClose) Close() error {
	b.once.Do(b.f)
	return b.ReadCloser.Close()
}

func TestTransportLeaksNoSlot(t *testing.T) {
	// Thousands of requests over a few capped domains, with base errors,
	// both-or-neither answers, error statuses, cancelled and expiring
	// contexts and WithMaxWait refusals mixed in. At the end every place
	// must be free.
	const (
		limit    = 2
		domains  = 4
		requests = 4000
	)
	tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
		switch req.URL.Query().Get("do") {
		case "error":
			return nil, errors.New("reset")
		case "both":
			return answer(req, http.StatusBadGateway), errors.New("both")
		case "neither":
			return nil, nil
		case "500":
			return answer(req, http.StatusInternalServerError), nil
		}
		return answer(req, http.StatusOK), nil
	}), polite.WithDefault(config.Limit{RequestsPerSecond: 1e5, Burst: 10, MaxConcurrent: limit, Quotas: []config.Quota{{Requests: 1e6, Window: time.Hour}},
		ErrorStatuses: []int{}}), // its 500s and 502s test the slots, not the backoff
		polite.WithMaxWait(time.Millisecond))
	actions := []string{"ok", "error", "both", "neither", "500", "ok"}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 40 {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > requests {
					return
				}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				switch i % 5 {
				case 1:
					ctx, cancel = context.WithCancel(ctx)
					cancel()
				case 2:
					ctx, cancel = context.WithTimeout(ctx, time.Duration(i%7)*100*time.Microsecond)
				}
				u := fmt.Sprintf("http://d%d.example/?do=%s", i%domains, actions[int(i/5)%len(actions)])
				resp, err := tr.RoundTrip(get(t, ctx, u))
				if err == nil {
					if i%3 == 0 {
						io.Copy(io.Discard, resp.Body)
					}
					resp.Body.Close()
				}
				cancel()
			}
		})
	}
	wg.Wait()

	var sent, canceled int64
	for d, s := range tr.AllStats() {
		assert.Zero(t, s.InFlight, d)
		sent += s.TotalRequests
		canceled += s.CanceledRequests
	}
	assert.Equal(t, int64(requests), sent+canceled, "every request is counted once")
	assert.Positive(t, canceled)
	assert.Positive(t, sent)
	for i := range domains {
		u := fmt.Sprintf("http://d%d.example/", i)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var held []*http.Response
		for range limit {
			resp, err := tr.RoundTrip(get(t, ctx, u))
			if assert.NoError(t, err, "%s: every place is free", u) {
				held = append(held, resp)
			}
		}
		cancel()
		ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := tr.RoundTrip(get(t, ctx, u))
		assert.ErrorIs(t, err, context.DeadlineExceeded, "%s: the cap still holds", u)
		cancel()
		for _, resp := range held {
			resp.Body.Close()
		}
	}
}

func TestTransportJitterNeverShrinksTheGap(t *testing.T) {
	const (
		minDelay = 100 * time.Millisecond
		jitter   = 50 * time.Millisecond
		n        = 30
	)
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			sends []time.Time
		)
		tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			sends = append(sends, time.Now())
			mu.Unlock()
			return answer(req, http.StatusOK), nil
		}), polite.WithDefault(config.Limit{MinDelay: minDelay, Jitter: jitter}))
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/")) })
		}
		wg.Wait()

		require.Len(t, sends, n)
		slices.SortFunc(sends, time.Time.Compare)
		distinct := map[time.Duration]bool{}
		for i := 1; i < n; i++ {
			gap := sends[i].Sub(sends[i-1])
			assert.GreaterOrEqual(t, gap, minDelay, "gap %d", i)
			assert.Less(t, gap, minDelay+jitter, "gap %d", i)
			distinct[gap] = true
		}
		assert.Greater(t, len(distinct), 1, "the gaps vary")
	})
}

// ctxKey keys a value a test puts in a request's context.
type ctxKey struct{}
