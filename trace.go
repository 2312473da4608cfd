package polite

import (
	"context"
	"time"

	"github.com/polite-go/polite/limiter"
)

// Trace is a set of hooks through which a Transport tells what it does
// for each request, in the spirit of net/http/httptrace: package
// otelpolite turns them into spans, and the Transport's own
// logging (WithLogger) is made from the same events. Give it to a
// Transport with WithTrace. Any field may be nil.
//
// The hooks are called synchronously, on the goroutine of the request
// they tell of, with its context (so that a hook finds the request's
// span there), and by many goroutines at once: they must be quick and
// safe for concurrent use. A request the Transport sends calls TurnAsked,
// then Waited if it waited, then Sent, then Answered and, if its response
// paused the domain, PauseObserved; one it does not send calls Refused
// instead of Sent. A robots.txt fetch is paced as a request of its own,
// with the context RobotsFetch returned.
type Trace struct {
	// TurnAsked is called when a request to domain (its key) asks for its
	// turn, once robots.txt allowed it.
	TurnAsked func(ctx context.Context, domain string)
	// Waited is called when a request to domain waited for its turn: for
	// wait in all, the last of it in scope ("domain", "server" or
	// "global") for reason, the rule that set it there.
	Waited func(ctx context.Context, domain, scope string, reason limiter.Reason, wait time.Duration)
	// PauseObserved is called when a response to a request to domain
	// paused it, or made its pause longer, by pause: reason says what
	// asked for it (limiter.ReasonRetryAfter, ReasonRateLimit,
	// ReasonBackoff, ReasonErrors).
	PauseObserved func(ctx context.Context, domain string, reason limiter.Reason, pause time.Duration)
	// Refused is called when a request to domain is not sent, with the
	// error RoundTrip returns: it wraps ErrDisallowed for robots.txt,
	// limiter.ErrWaitTooLong for a wait longer than WithMaxWait,
	// ErrGivenUp for a domain given up (WithMaxErrors), or the cause of
	// the request's context.
	Refused func(ctx context.Context, domain string, err error)
	// Sent is called just before a request to domain is handed to the
	// base transport; degraded says that its turn was decided by a
	// fallback, as the shared limiter (Redis) did not answer.
	Sent func(ctx context.Context, domain string, degraded bool)
	// Answered is called when the base transport returns for a request
	// to domain: with the response's status, or with 0 and its error.
	Answered func(ctx context.Context, domain string, status int, err error)
	// RobotsFetch is called when a request (whose context is ctx) needs
	// the robots.txt at url and no fetch of it is under way. The fetch,
	// which outlives the request, is sent with the context it returns,
	// without its cancellation, instead of context.Background(): return
	// one that holds what the fetch needs of ctx (a span), not all of ctx,
	// whose values (an httptrace.ClientTrace) belong to the request. done
	// is called, on the fetch's goroutine, when the fetch ends: with nil
	// when it read the file (or found none), else with why not. It is
	// called under a lock of the robots.txt cache.
	RobotsFetch func(ctx context.Context, url string) (fetchCtx context.Context, done func(err error))
	// RobotsJoined is called when a request (whose context is ctx) waits
	// for a robots.txt fetch another request started; fetchCtx is that
	// fetch's context, made from what RobotsFetch returned.
	RobotsJoined func(ctx, fetchCtx context.Context)
}

// WithTrace makes the Transport call tr's hooks; see Trace. Traces given
// by several options are all called, in the order of the options. A nil
// tr changes nothing.
func WithTrace(tr *Trace) Option {
	return func(o *options) {
		if tr != nil {
			o.traces = append(o.traces, tr)
		}
	}
}

// joinTraces returns a Trace that calls every hook of traces in turn, nil
// if there are none.
func joinTraces(traces []*Trace) *Trace {
	switch len(traces) {
	case 0:
		return nil
	case 1:
		return traces[0]
	}
	j := &Trace{}
	for _, tr := range traces {
		j.TurnAsked = join2(j.TurnAsked, tr.TurnAsked)
		j.Waited = join5(j.Waited, tr.Waited)
		j.PauseObserved = join4(j.PauseObserved, tr.PauseObserved)
		j.Refused = join3(j.Refused, tr.Refused)
		j.Sent = join3(j.Sent, tr.Sent)
		j.Answered = join4(j.Answered, tr.Answered)
		j.RobotsJoined = join2(j.RobotsJoined, tr.RobotsJoined)
		j.RobotsFetch = joinRobotsFetch(j.RobotsFetch, tr.RobotsFetch)
	}
	return j
}

func join2[A, B any](f, g func(A, B)) func(A, B) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(a A, b B) { f(a, b); g(a, b) }
}

func join3[A, B, C any](f, g func(A, B, C)) func(A, B, C) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(a A, b B, c C) { f(a, b, c); g(a, b, c) }
}

func join4[A, B, C, D any](f, g func(A, B, C, D)) func(A, B, C, D) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(a A, b B, c C, d D) { f(a, b, c, d); g(a, b, c, d) }
}

func join5[A, B, C, D, E any](f, g func(A, B, C, D, E)) func(A, B, C, D, E) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(a A, b B, c C, d D, e E) { f(a, b, c, d, e); g(a, b, c, d, e) }
}

// joinRobotsFetch returns a RobotsFetch that calls f, then g with the
// context f returned, and a done that calls both dones.
func joinRobotsFetch(f, g func(context.Context, string) (context.Context, func(error))) func(context.Context, string) (context.Context, func(error)) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(ctx context.Context, url string) (context.Context, func(error)) {
		ctx, fDone := f(ctx, url)
		ctx, gDone := g(ctx, url)
		return ctx, func(err error) {
			if fDone != nil {
				fDone(err)
			}
			if gDone != nil {
				gDone(err)
			}
		}
	}
}

// The Transport calls its Trace through these, which do nothing for a nil
// Trace or hook.

func (tr *Trace) turnAsked(ctx context.Context, domain string) {
	if tr != nil && tr.TurnAsked != nil {
		tr.TurnAsked(ctx, domain)
	}
}

func (tr *Trace) waited(ctx context.Context, domain string, w *waited) {
	if tr != nil && tr.Waited != nil && w.wait > 0 {
		tr.Waited(ctx, domain, w.scope, w.reason, w.wait)
	}
}

func (tr *Trace) pauseObserved(ctx context.Context, domain string, reason limiter.Reason, pause time.Duration) {
	if tr != nil && tr.PauseObserved != nil {
		tr.PauseObserved(ctx, domain, reason, pause)
	}
}

func (tr *Trace) refused(ctx context.Context, domain string, err error) {
	if tr != nil && tr.Refused != nil {
		tr.Refused(ctx, domain, err)
	}
}

func (tr *Trace) sent(ctx context.Context, domain string, degraded bool) {
	if tr != nil && tr.Sent != nil {
		tr.Sent(ctx, domain, degraded)
	}
}

func (tr *Trace) answered(ctx context.Context, domain string, status int, err error) {
	if tr != nil && tr.Answered != nil {
		tr.Answered(ctx, domain, status, err)
	}
}
