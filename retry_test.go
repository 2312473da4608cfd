package polite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// The helpers type-check as retryablehttp's own policy types.
var (
	_ retryablehttp.CheckRetry = (*polite.Transport)(nil).RetryPolicy(retryablehttp.DefaultRetryPolicy)
	_ retryablehttp.Backoff    = (*polite.Transport)(nil).Backoff(retryablehttp.DefaultBackoff)
)

func TestRetryPolicy(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Get", URL: "http://example.com/", Err: err} }
	errOther := errors.New("connection reset")
	tests := []struct {
		name      string
		resp      *http.Response
		err       error
		refused   bool
		wantRetry bool // what next (retrying everything) makes of it
	}{
		{"deadline it could not meet", nil, wrap(&polite.WaitError{Domain: "example.com", Err: context.DeadlineExceeded}), true, false},
		{"cancelled wait", nil, wrap(&polite.WaitError{Domain: "example.com", Err: context.Canceled}), true, false},
		{"wait too long", nil, wrap(fmt.Errorf("wrapped: %w", &polite.WaitError{Domain: "example.com", Err: limiter.ErrWaitTooLong})), true, false},
		{"disallowed", nil, wrap(polite.ErrDisallowed), true, false},
		{"other error", nil, wrap(errOther), false, true},
		{"500", &http.Response{StatusCode: 500}, nil, false, true},
		{"200", &http.Response{StatusCode: 200}, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var called int
			next := func(_ context.Context, resp *http.Response, err error) (bool, error) {
				called++
				assert.Same(t, tt.resp, resp)
				assert.Equal(t, tt.err, err)
				return true, nil
			}

			var tr *polite.Transport
			retry, err := tr.RetryPolicy(next)(context.Background(), tt.resp, tt.err)

			if tt.refused {
				assert.False(t, retry)
				assert.Equal(t, tt.err, err, "the refusal is passed on")
				assert.Zero(t, called, "next is not asked")
			} else {
				assert.Equal(t, tt.wantRetry, retry)
				assert.NoError(t, err)
				assert.Equal(t, 1, called)
			}
			retry, _ = tr.RetryPolicy(nil)(context.Background(), tt.resp, tt.err)
			assert.False(t, retry, "a nil next retries nothing")
		})
	}
}

func TestRetryBackoff(t *testing.T) {
	next := func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		return min * time.Duration(attempt+1)
	}
	tests := []struct {
		name string
		resp *http.Response
		want time.Duration
	}{
		{"429 leaves the delay to polite", &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"30"}}}, 0},
		{"503 leaves the delay to polite", &http.Response{StatusCode: 503}, 0},
		{"500 is next's", &http.Response{StatusCode: 500}, 3 * time.Second},
		{"an error is next's", nil, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, (*polite.Transport)(nil).Backoff(next)(time.Second, time.Minute, 2, tt.resp))
			assert.Zero(t, (*polite.Transport)(nil).Backoff(nil)(time.Second, time.Minute, 2, tt.resp), "a nil next adds no delay")
		})
	}
	assert.Equal(t, time.Duration(0), (*polite.Transport)(nil).Backoff(retryablehttp.DefaultBackoff)(time.Second, time.Minute, 0,
		&http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"30"}}}), "retryablehttp would sleep 30s")
}

// retryClient returns a retryablehttp client over tr that would retry at
// once on its own, counting its attempts.
func retryClient(tr http.RoundTripper, policy retryablehttp.CheckRetry, attempts *atomic.Int64) *retryablehttp.Client {
	client := retryablehttp.NewClient()
	client.Logger = nil
	client.HTTPClient.Transport = tr
	client.RetryMax = 3
	client.RetryWaitMin, client.RetryWaitMax = time.Millisecond, time.Millisecond
	client.CheckRetry = policy
	client.Backoff = (*polite.Transport)(nil).Backoff(retryablehttp.DefaultBackoff)
	client.RequestLogHook = func(retryablehttp.Logger, *http.Request, int) { attempts.Add(1) }
	return client
}

func TestRetryEveryAttemptIsPaced(t *testing.T) {
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
	client := retryClient(tr, (*polite.Transport)(nil).RetryPolicy(retryablehttp.DefaultRetryPolicy), &attempts)
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

func TestRetryRefusalIsNotRetried(t *testing.T) {
	tests := []struct {
		name     string
		policy   retryablehttp.CheckRetry
		attempts int64
	}{
		{"RetryPolicy", (*polite.Transport)(nil).RetryPolicy(retryablehttp.DefaultRetryPolicy), 1},
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
			tr := newTransport(t, nil, polite.WithDefault(everyHour))
			var attempts atomic.Int64
			client := retryClient(tr, tt.policy, &attempts)
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
