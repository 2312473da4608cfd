package polite_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/limiter"
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
}
