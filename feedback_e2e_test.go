package polite_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// arrivals records when a test server saw each request.
type arrivals struct {
	mu    sync.Mutex
	times []time.Time
}

func (a *arrivals) add() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.times = append(a.times, time.Now())
	return len(a.times)
}

func (a *arrivals) gap(i, j int) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.times[j].Sub(a.times[i])
}

// TestRetryAfterAndRateLimitHeadersEndToEnd sends two requests to a server
// whose first answer asks for a pause in one of the header forms polite
// reads; the second request must wait for it. Bounds are one-sided: the
// pause is at least about a second.
func TestRetryAfterAndRateLimitHeadersEndToEnd(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header func() http.Header
		reason limiter.Reason
		least  time.Duration // the shortest pause the header can mean
	}{
		{"Retry-After seconds on 429", 429, func() http.Header { return http.Header{"Retry-After": {"1"}} }, limiter.Reason("retry-after"), time.Second},
		{"Retry-After seconds on 503", 503, func() http.Header { return http.Header{"Retry-After": {"1"}} }, limiter.Reason("retry-after"), time.Second},
		{"Retry-After date", 429, func() http.Header {
			// One-second resolution: now+3s means a pause of more than 2s
			// from now, over 1s however late polite reads the response.
			return http.Header{"Retry-After": {time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)}}
		}, limiter.Reason("retry-after"), time.Second},
		{"RateLimit-Remaining and RateLimit-Reset", 200, func() http.Header {
			return http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"1"}}
		}, limiter.Reason("ratelimit"), time.Second},
		{"RateLimit with t", 200, func() http.Header {
			return http.Header{"Ratelimit": {`"default";r=0;t=1`}, "Ratelimit-Policy": {`"default";q=5;w=60`}}
		}, limiter.Reason("ratelimit"), time.Second},
		{"RateLimit with the window of RateLimit-Policy", 200, func() http.Header {
			return http.Header{"Ratelimit": {`"default";r=0`}, "Ratelimit-Policy": {`"default";q=5;w=1`}}
		}, limiter.Reason("ratelimit"), time.Second},
		{"X-RateLimit-Reset delta", 429, func() http.Header {
			return http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1"}}
		}, limiter.Reason("ratelimit"), time.Second},
		{"X-RateLimit-Reset epoch", 403, func() http.Header {
			reset := time.Now().Add(3 * time.Second).Unix() // as the date above
			return http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset, 10)}}
		}, limiter.Reason("ratelimit"), time.Second},
		{"429 without a hint backs off", 429, func() http.Header { return http.Header{} }, limiter.Reason("backoff"), time.Second},
		{"Retry-After with a decimal part (Shopify)", 429, func() http.Header { return http.Header{"Retry-After": {"1.5"}} }, limiter.Reason("retry-after"), 2 * time.Second},
		{"Retry-After on a 403 (GitHub's secondary limit)", 403, func() http.Header { return http.Header{"Retry-After": {"1"}} }, limiter.Reason("retry-after"), time.Second},
		{"X-Rate-Limit-Reset (X, Okta)", 200, func() http.Header {
			reset := time.Now().Add(3 * time.Second).Unix()
			return http.Header{"X-Rate-Limit-Remaining": {"0"}, "X-Rate-Limit-Reset": {strconv.FormatInt(reset, 10)}}
		}, limiter.Reason("ratelimit"), time.Second},
		{"OpenAI's tokens pair", 200, func() http.Header {
			return http.Header{"X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"1s"}}
		}, limiter.Reason("ratelimit"), time.Second},
		{"a 502 backs off", 502, func() http.Header { return http.Header{} }, limiter.Reason("errors"), time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seen arrivals
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if seen.add() == 1 {
					for k, v := range tt.header() {
						w.Header()[k] = v
					}
					w.WriteHeader(tt.status)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			defer srv.Close()
			tr := newTransport(t, srv.Client().Transport, polite.WithDefault(fastLimit))
			client := &http.Client{Transport: tr}

			resp, err := client.Get(srv.URL + "/first")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode, "the response is returned as it is")

			s, ok := tr.Stats("127.0.0.1")
			require.True(t, ok)
			assert.Equal(t, tt.reason, s.PauseReason)
			assert.True(t, s.PausedUntil.After(time.Now()), "paused until %v", s.PausedUntil)
			assert.GreaterOrEqual(t, s.PausedTime, tt.least-50*time.Millisecond)

			resp, err = client.Get(srv.URL + "/second")
			require.NoError(t, err)
			resp.Body.Close()
			assert.GreaterOrEqual(t, seen.gap(0, 1), tt.least-50*time.Millisecond, "the second request waited for the pause")
		})
	}
}

func TestRetryAfterPausesOnlyItsDomain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			resp := answer(req, http.StatusOK)
			if req.URL.Host == "slow.example" {
				resp.StatusCode = http.StatusTooManyRequests
				resp.Header.Set("Retry-After", "120")
			}
			return resp, nil
		})
		tr := newTransport(t, base, polite.WithDefault(fastLimit))
		ctx := context.Background()
		require.NoError(t, roundTrip(t, tr, ctx, "http://slow.example/"))

		start := time.Now()
		require.NoError(t, roundTrip(t, tr, ctx, "http://other.example/"))
		assert.Zero(t, time.Since(start), "another domain does not wait")
		assert.Equal(t, 120*time.Second, tr.RemainingWait("slow.example"))

		require.NoError(t, roundTrip(t, tr, ctx, "http://slow.example/"))
		assert.Equal(t, 120*time.Second, time.Since(start), "the paused domain waits for Retry-After")
		s, _ := tr.Stats("slow.example")
		assert.Equal(t, int64(2), s.ThrottledResponses)
		assert.Equal(t, int64(2), s.Responses[4])
		assert.Equal(t, 240*time.Second, s.PausedTime, "two pauses, back to back")
		assert.Equal(t, limiter.Reason("retry-after"), s.PauseReason)
		assert.Equal(t, start.Add(240*time.Second), s.PausedUntil)
	})
}

func TestRetryAfterIsCappedByMaxPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			resp := answer(req, http.StatusServiceUnavailable)
			resp.Header.Set("Retry-After", "86400")
			return resp, nil
		})
		tr := newTransport(t, base, polite.WithDefault(fastLimit), polite.WithMaxPause(time.Minute))
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
		assert.Equal(t, time.Minute, tr.RemainingWait("example.com"))
	})
}

// TestFeedbackInFlightThrottlesCountOnce sends a wave of requests that all
// get a 429 without Retry-After: the backoff starts at 1s once, not 2^n.
// Then a 429 to a request sent after the pause doubles it, and a success
// resets it.
func TestFeedbackInFlightThrottlesCountOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var status atomic.Int64
		status.Store(http.StatusTooManyRequests)
		const wave = 5
		var arrived sync.WaitGroup
		arrived.Add(wave)
		release := make(chan struct{})
		var first atomic.Bool
		first.Store(true)
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			if first.Load() {
				arrived.Done()
				<-release
			}
			return answer(req, int(status.Load())), nil
		})
		tr := newTransport(t, base, polite.WithDefault(fastLimit))
		ctx := context.Background()

		var done sync.WaitGroup
		for range wave {
			done.Go(func() { assert.NoError(t, roundTrip(t, tr, ctx, "http://example.com/")) })
		}
		arrived.Wait()
		first.Store(false)
		close(release)
		done.Wait()
		assert.Equal(t, time.Second, tr.RemainingWait("example.com"), "five in-flight 429s, one backoff step")

		time.Sleep(time.Second)
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/"))
		assert.Equal(t, 2*time.Second, tr.RemainingWait("example.com"), "a new 429 doubles the step")

		status.Store(http.StatusOK)
		start := time.Now()
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/"))
		assert.Equal(t, 2*time.Second, time.Since(start), "the request waited out the pause")

		status.Store(http.StatusTooManyRequests)
		require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/"))
		assert.Equal(t, time.Second, tr.RemainingWait("example.com"), "the success reset the backoff")
		s, _ := tr.Stats("example.com")
		assert.Equal(t, limiter.Reason("backoff"), s.PauseReason)
		assert.Equal(t, int64(wave+2), s.ThrottledResponses)
	})
}

// TestFeedbackWaitingRequestHonoursALaterPause: a request that claimed its
// turn before a server asked for a pause does not go inside the pause,
// whether its own Transport observed the pause or another one sharing
// its limiter did, as workers sharing Redis do.
func TestFeedbackWaitingRequestHonoursALaterPause(t *testing.T) {
	for _, observedBy := range []string{"the same transport", "another worker"} {
		t.Run(observedBy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var sentB time.Time
				base := baseFunc(func(req *http.Request) (*http.Response, error) {
					if req.URL.Path == "/a" {
						time.Sleep(5 * time.Second)
						resp := answer(req, http.StatusTooManyRequests)
						resp.Header.Set("Retry-After", "30")
						return resp, nil
					}
					sentB = time.Now()
					return answer(req, http.StatusOK), nil
				})
				opts := []polite.Option{polite.WithDefault(config.Limit{MinDelay: 10 * time.Second}), polite.WithLimiter(limiter.NewMemory())}
				tr := newTransport(t, base, opts...)
				observer := tr
				if observedBy == "another worker" {
					observer = newTransport(t, base, opts...)
				}
				ctx := context.Background()
				var done sync.WaitGroup
				done.Go(func() { assert.NoError(t, roundTrip(t, observer, ctx, "http://example.com/a")) })
				synctest.Wait() // /a is in flight; /b will claim the turn at +10s
				done.Go(func() { assert.NoError(t, roundTrip(t, tr, ctx, "http://example.com/b")) })
				done.Wait()
				assert.Equal(t, 35*time.Second, sentB.Sub(start), "/b went when the pause that began at +5s ended")
				s, _ := tr.Stats("example.com")
				assert.Equal(t, 35*time.Second, s.TotalWaitTime, "/b's whole wait is counted")
			})
		})
	}
}

func TestFeedbackOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  polite.Option
	}{
		{"max pause negative", polite.WithMaxPause(-time.Second)},
		{"robots without agent", polite.WithRobots(" ")},
		{"max crawl delay negative", polite.WithMaxCrawlDelay(-time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := polite.NewTransport(nil, tt.opt)
			require.Error(t, err)
			assert.Nil(t, tr)
			assert.Regexp(t, `^polite: With\w+: `, err.Error())
		})
	}
}

// TestAdaptivePacingFollowsLatency: after a response that took 2s, the gap
// between two requests becomes (0.1s + 2s/1)/2 = 1.05s, where the
// configured pace alone allows 0.1s.
func TestAdaptivePacingFollowsLatency(t *testing.T) {
	for _, adaptive := range []bool{true, false} {
		t.Run("adaptive="+strconv.FormatBool(adaptive), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var starts []time.Time
				base := baseFunc(func(req *http.Request) (*http.Response, error) {
					mu.Lock()
					starts = append(starts, time.Now())
					mu.Unlock()
					time.Sleep(2 * time.Second)
					return answer(req, http.StatusOK), nil
				})
				limit := config.Limit{RequestsPerSecond: 10, Burst: 1, Adaptive: adaptive}
				tr := newTransport(t, base, polite.WithDefault(limit))
				ctx := context.Background()
				require.NoError(t, roundTrip(t, tr, ctx, "http://example.com/1"))
				var done sync.WaitGroup
				for range 2 {
					done.Go(func() { assert.NoError(t, roundTrip(t, tr, ctx, "http://example.com/2")) })
				}
				done.Wait()
				require.Len(t, starts, 3)
				want := 100 * time.Millisecond
				if adaptive {
					want = 1050 * time.Millisecond
				}
				assert.Equal(t, want, starts[2].Sub(starts[1]))
			})
		})
	}
}
