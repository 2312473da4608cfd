package polite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/polite-go/polite/internal/robotscache"
)

// WaitError is the error for a request that polite did not send because
// its wait failed: the context was cancelled, its deadline could not be
// met, or the wait was longer than WithMaxWait allows. Nothing was sent and
// nothing of the domain's pace was consumed. errors.Is sees through it to
// the cause: context.Canceled, context.DeadlineExceeded or
// limiter.ErrWaitTooLong.
// A WaitError is not modified after it is returned.
type WaitError struct {
	// Domain is the key the request was paced under.
	Domain string
	// RetryAt is the earliest time the request could have gone.
	RetryAt time.Time
	// Err is the cause.
	Err error
}

func (e *WaitError) Error() string {
	at := e.RetryAt.Format(time.RFC3339Nano)
	switch {
	case errors.Is(e.Err, context.DeadlineExceeded):
		return fmt.Sprintf("polite: %s: request not sent: its turn comes at %s, after the context's deadline (Client.Timeout or context deadline exceeded while awaiting its turn)", e.Domain, at)
	case errors.Is(e.Err, context.Canceled):
		return fmt.Sprintf("polite: %s: request not sent: context canceled while awaiting its turn at %s", e.Domain, at)
	}
	return fmt.Sprintf("polite: %s: request not sent, could go at %s: %v", e.Domain, at, e.Err)
}

func (e *WaitError) Unwrap() error { return e.Err }

// Timeout reports whether the request was refused because its turn came
// after its context's deadline, as net/http's own timeout errors do, so
// that url.Error.Timeout and os.IsTimeout see it through an http.Client.
func (e *WaitError) Timeout() bool { return errors.Is(e.Err, context.DeadlineExceeded) }

// Temporary reports the same as Timeout, as net/http's timeout errors do.
func (e *WaitError) Temporary() bool { return e.Timeout() }

// ErrDisallowed is the error for a request that robots.txt forbids; such a
// request is never sent. See WithRobots.
var ErrDisallowed = robotscache.ErrDisallowed
