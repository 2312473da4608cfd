package polite

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// RetryPolicy wraps next, a github.com/hashicorp/go-retryablehttp CheckRetry
// policy, so that the Transport's own refusals are never retried: a wait
// that failed (a *WaitError: cancelled, a deadline it could not meet,
// longer than WithMaxWait), a request robots.txt disallows (ErrDisallowed)
// and a URL with no host (ErrNoHost). Retrying those would only be refused
// again, or sent after the caller gave up. It returns false and the error
// for them, and defers to next for everything else:
//
//	client := retryablehttp.NewClient()
//	client.HTTPClient.Transport = transport // a *polite.Transport
//	client.CheckRetry = polite.RetryPolicy(retryablehttp.DefaultRetryPolicy)
//	client.Backoff = polite.Backoff(retryablehttp.DefaultBackoff)
//
// polite does not import retryablehttp, so programs that do not use it do
// not carry it; pass retryablehttp.DefaultRetryPolicy (or your own policy)
// as next. A nil next retries nothing.
func RetryPolicy(next func(ctx context.Context, resp *http.Response, err error) (bool, error)) func(ctx context.Context, resp *http.Response, err error) (bool, error) {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if Refused(err) {
			return false, err
		}
		if next == nil {
			return false, nil
		}
		return next(ctx, resp, err)
	}
}

// Refused reports whether err is one of the Transport's own refusals to
// send a request, which retrying cannot cure: a *WaitError, ErrDisallowed
// or ErrNoHost, however wrapped.
func Refused(err error) bool {
	var we *WaitError
	return errors.As(err, &we) || errors.Is(err, ErrDisallowed) || errors.Is(err, ErrNoHost)
}

// Backoff wraps next, a github.com/hashicorp/go-retryablehttp Backoff, so
// that a retry after a 429 Too Many Requests or 503 Service Unavailable
// response is not delayed twice: the retry goes straight back to the
// Transport, whose pacing (and the pause the server asked for, when the
// Transport learns from responses) decides when it is sent. Every other
// case is left to next; a nil next adds no delay of its own, leaving every
// retry's timing to the Transport. See RetryPolicy.
func Backoff(next func(min, max time.Duration, attempt int, resp *http.Response) time.Duration) func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	return func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		if (resp != nil && isThrottled(resp.StatusCode)) || next == nil {
			return 0
		}
		return next(min, max, attempt, resp)
	}
}
