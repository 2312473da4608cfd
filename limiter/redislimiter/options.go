package redislimiter

import (
	"log/slog"
	"time"
)

// Option configures a Limiter.
// Options are applied once, by New, before the Limiter is shared.
type Option func(*options)

// mode is what a Limiter does while Redis does not answer.
type mode int

const (
	modeFallback mode = iota
	modeFailOpen
	modeFailClosed
)

func (m mode) String() string {
	switch m {
	case modeFailOpen:
		return "fail-open"
	case modeFailClosed:
		return "fail-closed"
	}
	return "fallback"
}

type options struct {
	prefix     string
	timeout    time.Duration
	probeEvery time.Duration
	logger     *slog.Logger
	mode       mode
}

func defaultOptions() options {
	return options{prefix: "polite:", timeout: 100 * time.Millisecond, probeEvery: 250 * time.Millisecond, logger: slog.Default()}
}

// WithPrefix sets the text every key starts with, "polite:" by default.
// A domain's keys are prefix + "{domain}:state" and prefix +
// "{domain}:q:N", one hash slot per domain on Redis Cluster. Processes that
// share a pace must use the same prefix.
func WithPrefix(prefix string) Option {
	return func(o *options) { o.prefix = prefix }
}

// WithTimeout bounds each call to Redis, 100ms by default, whatever the
// client's own timeouts: a call that takes longer counts as Redis being
// unavailable. Keep it short: a request waits for it before it waits for
// its turn. Calls that start close together share the timer that ends
// them, so a call may last up to a sixteenth longer.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithProbeInterval sets how often a Limiter whose Redis does not answer
// tries it again in the background, with a reservation on a key of its own
// (not a PING, which a full Redis still answers), 250ms by default. The
// shared pace comes back at most about one interval after that call works.
func WithProbeInterval(d time.Duration) Option {
	return func(o *options) { o.probeEvery = d }
}

// WithLogger sets where the Limiter logs that Redis stopped answering
// (once, at Warn) and that it answers again (once, at Info);
// slog.Default() by default, and when l is nil, as in polite.WithLogger.
// For silence, pass slog.New(slog.DiscardHandler).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l == nil {
			l = slog.Default()
		}
		o.logger = l
	}
}

// FailOpen makes a Limiter stop pacing while Redis does not answer:
// requests go at once, and their reservations are marked Degraded. Use it
// when Redis sits in front of servers you own, or when being late costs
// more than a burst of requests; never for third-party sites, where a burst
// from every worker at once is what pacing exists to prevent.
//
// By default (neither FailOpen nor FailClosed) each process paces on its
// own with the same limits, in a limiter.Memory: the right choice for
// crawling other people's sites, since each domain then sees at most the
// number of processes times its rate, and no request fails.
func FailOpen() Option {
	return func(o *options) { o.mode = modeFailOpen }
}

// FailClosed makes Reserve, State and a reservation's Cancel and Confirm
// fail with an error wrapping ErrUnavailable while Redis does not answer,
// so that no request goes unpaced and none goes faster than the shared
// pace allows. (Observe still succeeds: the pause a server asked for is
// carried over to Redis once it answers.) Use it when the combined rate is
// a hard limit (a contract, an API key shared by all workers) and a failed
// request is cheaper than an extra one.
func FailClosed() Option {
	return func(o *options) { o.mode = modeFailClosed }
}
