package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// The Transport's helpers type-check as retryablehttp's own policy types.
var (
	_ retryablehttp.CheckRetry = (*polite.Transport)(nil).RetryPolicy(retryablehttp.DefaultRetryPolicy)
	_ retryablehttp.Backoff    = (*polite.Transport)(nil).Backoff(retryablehttp.DefaultBackoff)
)

func newTransport(t *testing.T, base http.RoundTripper, opts ...polite.Option) *polite.Transport {
	t.Helper()
	tr, err := polite.NewTransport(base, opts...)
	require.NoError(t, err)
	return tr
}

// quickClient is newClient over tr, retrying up to 3 times at once on its
// own, counting its attempts.
func quickClient(tr *polite.Transport, attempts *atomic.Int64) *retryablehttp.Client {
	client := newClient(tr, 3)
	client.RetryWaitMin, client.RetryWaitMax = time.Millisecond, time.Millisecond
	client.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { attempts.Add(1) }
	return client
}

func TestBackoffLeavesRetryAfterToTheTransport(t *testing.T) {
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"30"}}}
	assert.Equal(t, 30*time.Second, retryablehttp.DefaultBackoff(time.Second, time.Minute, 0, resp), "retryablehttp alone sleeps Retry-After")
	assert.Zero(t, (*polite.Transport)(nil).Backoff(retryablehttp.DefaultBackoff)(time.Second, time.Minute, 0, resp))
}

func TestEveryAttemptIsPaced(t *testing.T) {
	const gap = 300 * time.Millisecond
	var (
		mu       sync.Mutex
		arrivals []time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		n := len(arrivals)
		mu.Unlock()
		if n <= 2 {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "done")
	}))
	defer srv.Close()
	tr := newTransport(t, nil, polite.WithDefault(config.Limit{MinDelay: gap}))
	var attempts atomic.Int64
	client := quickClient(tr, &attempts)
	start := time.Now()

	resp, err := client.Get(srv.URL)

	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "done", string(b))
	assert.Equal(t, int64(3), attempts.Load())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, arrivals, 3)
	for i, at := range arrivals {
		// Attempt i starts at least i gaps after the first, which starts
		// after start: one-sided, however late each arrival is.
		assert.GreaterOrEqual(t, at.Sub(start), time.Duration(i)*gap, "attempt %d", i+1)
	}
	s, ok := tr.Stats("127.0.0.1")
	require.True(t, ok)
	assert.Equal(t, int64(3), s.TotalRequests)
	assert.Equal(t, int64(2), s.Responses[5])
	assert.Equal(t, int64(1), s.Responses[2])
	assert.Equal(t, int64(0), s.InFlight, "retryablehttp drained and closed every body")
}

func TestRefusalIsNotRetried(t *testing.T) {
	tests := []struct {
		name     string
		policy   retryablehttp.CheckRetry // nil: newClient's
		attempts int64
	}{
		{"RetryPolicy", nil, 1},
		// Without it, retryablehttp retries what polite will refuse again.
		{"DefaultRetryPolicy alone", retryablehttp.DefaultRetryPolicy, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
			}))
			defer srv.Close()
			tr := newTransport(t, nil, polite.WithDefault(config.Limit{MinDelay: time.Hour}))
			var attempts atomic.Int64
			client := quickClient(tr, &attempts)
			if tt.policy != nil {
				client.CheckRetry = tt.policy
			}
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			resp.Body.Close()
			attempts.Store(0)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			start := time.Now()

			resp, err = client.Do(req)

			require.Error(t, err)
			assert.Nil(t, resp)
			assert.Less(t, time.Since(start), 5*time.Second, "refused at once, not at the deadline")
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			var we *polite.WaitError
			assert.ErrorAs(t, err, &we)
			assert.Equal(t, tt.attempts, attempts.Load())
			assert.Equal(t, int64(1), hits.Load(), "nothing refused reached the server")
		})
	}
}

// baseFunc is a base RoundTripper made of a function.
type baseFunc func(*http.Request) (*http.Response, error)

func (f baseFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// answer answers req with an empty response of the given status.
func answer(req *http.Request, status int) *http.Response {
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{}, Body: http.NoBody, Request: req}
}

// TestRetryAfter shows retryablehttp and polite working together: the
// retry after a 429 goes when polite's pause ends. A server asking for an
// hour is capped by WithMaxPause; with the Transport's Backoff the retry
// goes when the capped pause ends, where retryablehttp's DefaultBackoff
// alone sleeps the whole Retry-After.
func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		polite     bool          // the Transport's Backoff wraps DefaultBackoff
		want       time.Duration // between the two attempts
	}{
		{"Retry-After within the cap", "1", true, time.Second},
		{"Retry-After over the cap", "3600", true, time.Minute},
		{"DefaultBackoff alone sleeps past the cap", "3600", false, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var sent []time.Time // the base runs in the client's goroutine
				base := baseFunc(func(req *http.Request) (*http.Response, error) {
					sent = append(sent, time.Now())
					if len(sent) == 1 {
						resp := answer(req, http.StatusTooManyRequests)
						resp.Header.Set("Retry-After", tt.retryAfter)
						return resp, nil
					}
					return answer(req, http.StatusOK), nil
				})
				tr := newTransport(t, base, polite.WithDefault(config.Limit{RequestsPerSecond: 1e6, Burst: 1000}), polite.WithMaxPause(time.Minute))
				client := newClient(tr, 4)
				if !tt.polite {
					client.Backoff = retryablehttp.DefaultBackoff
				}

				resp, err := client.Get("http://example.com/")

				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				require.Len(t, sent, 2)
				assert.Equal(t, tt.want, sent[1].Sub(sent[0]))
			})
		})
	}
}
