package polite

import (
	"errors"
	"fmt"
	"time"
)

// ErrWaitTooLong is the cause of a *WaitError for a request that would have
// waited longer than WithMaxWait allows.
var ErrWaitTooLong = errors.New("polite: wait longer than the maximum allowed")

// WaitError is the error for a request that polite did not send because
// its wait failed: the context was cancelled, its deadline could not be
// met, or the wait was longer than WithMaxWait allows. Nothing was sent and
// nothing of the domain's pace was consumed. errors.Is sees through it to
// the cause: context.Canceled, context.DeadlineExceeded or ErrWaitTooLong.
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
	return fmt.Sprintf("polite: %s: not sent, could go at %s: %v", e.Domain, e.RetryAt.Format(time.RFC3339Nano), e.Err)
}

func (e *WaitError) Unwrap() error { return e.Err }

// ErrDisallowed is the error for a request that robots.txt forbids; such a
// request is never sent. See WithRobots.
var ErrDisallowed = errors.New("polite: disallowed by robots.txt")
