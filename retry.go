package polite

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/polite-go/polite/internal/feedback"
)

// RetryPolicy wraps next, a github.com/hashicorp/go-retryablehttp CheckRetry
// policy, so that the Transport's own refusals are never retried: a wait
// that failed (a *WaitError: cancelled, a deadline it could not meet,
// longer than WithMaxWait) and a request robots.txt disallows
// (ErrDisallowed). Retrying those would only be refused again, or sent
// after the caller gave up. It returns false and the error for them, and
// defers to next for everything else:
//
//	client := retryablehttp.NewClient()
//	client.HTTPClient.Transport = t // a *polite.Transport
//	client.CheckRetry = t.RetryPolicy(retryablehttp.DefaultRetryPolicy)
//	client.Backoff = t.Backoff(retryablehttp.DefaultBackoff)
//
// polite does not import retryablehttp, so programs that do not use it do
// not carry it; the module examples/retryablehttp shows the two together.
// A nil next retries nothing.
func (t *Transport) RetryPolicy(next func(ctx context.Context, resp *http.Response, err error) (bool, error)) func(ctx context.Context, resp *http.Response, err error) (bool, error) {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if refused(err) {
			return false, err
		}
		if next == nil {
			return false, nil
		}
		return next(ctx, resp, err)
	}
}

// refused reports whether err is one of the Transport's own refusals to
// send a request, which retrying cannot cure, however wrapped.
func refused(err error) bool {
	var we *WaitError
	return errors.As(err, &we) || errors.Is(err, ErrDisallowed)
}

// Backoff wraps next, a github.com/hashicorp/go-retryablehttp Backoff, so
// that a retry after a 429 Too Many Requests or 503 Service Unavailable
// response is not delayed twice: the retry goes straight back to the
// Transport, whose pacing and the pause the server asked for decide when
// it is sent. Every other case is left to next; a nil next adds no delay
// of its own. See RetryPolicy.
func (t *Transport) Backoff(next func(min, max time.Duration, attempt int, resp *http.Response) time.Duration) func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	return func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		if (resp != nil && feedback.Throttled(resp.StatusCode)) || next == nil {
			return 0
		}
		return next(min, max, attempt, resp)
	}
}
