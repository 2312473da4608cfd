package polite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/polite-go/polite/internal/places"
	"github.com/polite-go/polite/internal/robotscache"
)

// WaitError is the error for a request that polite did not send because
// its wait failed: its context ended while it waited for a place under
// MaxConcurrent or for its turn, its turn would come after the context's
// deadline, the wait was longer than WithMaxWait allows, or its host's
// robots.txt could not be fetched (ErrRobotsUnreachable: RetryAt says when
// it is fetched again). Nothing was sent and nothing of the domain's pace
// was consumed. errors.Is sees
// through it to the cause: context.Cause of the request's context (so
// context.Canceled, context.DeadlineExceeded, or the cause given to
// context.WithCancelCause or WithDeadlineCause), context.DeadlineExceeded
// for a turn after the deadline, or limiter.ErrWaitTooLong. A request
// whose context has ended before it asks for its turn gets net/http's
// error instead: context.Cause of its context, unwrapped.
//
// A wait counts against the context's deadline, and so against
// http.Client.Timeout: a client with a short timeout that sends many
// requests to one domain at once sees the later ones fail with a
// WaitError before their turn. Give each request a time limit that starts
// with its turn instead: leave Client.Timeout at 0 and give the Transport
// WithTimeout (as examples/colly does for colly's 10 s), or send the
// requests through a frontier (package frontier), which hands a worker a
// request only when its turn has come.
//
// A WaitError is not modified after it is returned.
type WaitError struct {
	// Domain is the key the request was paced under.
	Domain string
	// RetryAt is the earliest time the request could have gone.
	RetryAt time.Time
	// Err is the cause.
	Err error
}

// Error says which domain's request was not sent, when it could have
// gone (a local RFC 3339 time, to the millisecond), and why.
func (e *WaitError) Error() string {
	at := e.RetryAt.Local().Format(errorTime)
	var full *places.AllTakenError
	switch {
	case errors.As(e.Err, &full):
		return fmt.Sprintf("polite: %s: request not sent: %v", e.Domain, full)
	case e.Err == context.DeadlineExceeded:
		return fmt.Sprintf("polite: %s: request not sent: its turn comes at %s, after the context's deadline (Client.Timeout or context deadline exceeded while awaiting its turn)", e.Domain, at)
	case e.Err == context.Canceled:
		return fmt.Sprintf("polite: %s: request not sent: context canceled while awaiting its turn at %s", e.Domain, at)
	}
	return fmt.Sprintf("polite: %s: request not sent, could go at %s: %v", e.Domain, at, e.Err)
}

// errorTime is how errors write a time: RFC 3339 to the millisecond, in
// the local zone, as a person reads it next to a log.
const errorTime = "2006-01-02T15:04:05.000Z07:00"

// Unwrap returns Err.
func (e *WaitError) Unwrap() error { return e.Err }

// Timeout reports whether the request was refused because its turn came
// after its context's deadline, as net/http's own timeout errors do, so
// that url.Error.Timeout and os.IsTimeout see it through an http.Client.
// A deadline given another cause (context.WithDeadlineCause) is not a
// timeout.
func (e *WaitError) Timeout() bool { return errors.Is(e.Err, context.DeadlineExceeded) }

// Temporary reports the same as Timeout, as net/http's timeout errors do.
func (e *WaitError) Temporary() bool { return e.Timeout() }

// errNotMade is the error of a Transport that NewTransport did not make,
// such as a zero Transport: it sends nothing and changes nothing.
var errNotMade = errors.New("polite: a Transport must be made by NewTransport")

// made reports whether NewTransport made t; see errNotMade.
func (t *Transport) made() bool { return t.keyFunc != nil }

// ErrDisallowed is the error for a request that robots.txt forbids; such a
// request is never sent. See WithRobots.
var ErrDisallowed = robotscache.ErrDisallowed

// ErrRobotsUnreachable is matched, with ErrDisallowed, by the error for a
// request refused because its host's robots.txt could not be fetched (a
// 5xx or 429 answer, no answer): RFC 9309 then disallows the whole host
// until the file is fetched again. The error is a *WaitError whose RetryAt
// says when that is; a request sent after it may go.
var ErrRobotsUnreachable = robotscache.ErrUnreachable
