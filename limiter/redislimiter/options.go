package redislimiter

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Option configures a Limiter made by New. Each option's doc says its
// default; New reports an option it cannot use as an error.
type Option func(*options)

type options struct {
	prefix        string
	timeout       time.Duration
	probeInterval time.Duration
	logger        *slog.Logger
	failOpen      bool
	failClosed    bool
}

// WithPrefix starts every key the Limiter writes with prefix; "polite:" by
// default, or if prefix is empty. A domain's keys are prefix +
// "{domain}:state", prefix + "{domain}:starts" (the starts its quotas
// count) and prefix + "{domain}:last" (its latest start), one hash slot
// per domain on Redis Cluster. Processes that share a pace must use the
// same prefix. It must not hold "{": Redis Cluster hashes the first {...}
// of a key, so a prefix such as "app:{x}:" would put every domain in one
// slot.
func WithPrefix(prefix string) Option {
	return func(o *options) { o.prefix = prefix }
}

// WithTimeout bounds each call to Redis, whatever the client's own
// timeouts; 100ms by default, or if d is 0. A call that takes longer
// counts as Redis being unavailable. Keep it short: a request waits for it
// before it waits for its turn. Calls that start close together share the
// timer that ends them, so a call may last up to a sixteenth longer.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithProbeInterval sets how often a Limiter whose Redis does not answer
// tries it again in the background, with a reservation on a key of its
// own (not a PING, which a full Redis still answers); 100ms by default, or
// if d is 0. The shared pace comes back at most about one interval after
// that call works. With a *redis.Client, each try first dials Redis (for a
// Sentinel-managed client, asking a Sentinel where the primary is), and
// goes no further while that fails.
func WithProbeInterval(d time.Duration) Option {
	return func(o *options) { o.probeInterval = d }
}

// WithLogger sets where the Limiter logs that Redis stopped answering
// (once, at Warn) and that it answers again (once, at Info);
// slog.Default() by default, or if l is nil. For silence, use
// slog.New(slog.DiscardHandler).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithFailOpen makes a Limiter stop pacing while Redis does not answer:
// requests go at once, and their reservations are marked Degraded. Use it
// when Redis sits in front of servers you own, or when being late costs
// more than a burst of requests; never for third-party sites, where a
// burst from every worker at once is what pacing exists to prevent.
//
// By default (neither WithFailOpen nor WithFailClosed) each process paces
// on its own with the same limits, in a limiter.Memory: the right choice
// for crawling other people's sites, since each domain then sees at most
// the number of processes times its rate, and no request fails.
func WithFailOpen() Option {
	return func(o *options) { o.failOpen = true }
}

// WithFailClosed makes Reserve, State and a reservation's Cancel and
// Confirm fail with an error wrapping ErrUnavailable while Redis does not
// answer, so that no request goes unpaced and none goes faster than the
// shared pace allows. (Observe still succeeds: the pause a server asked
// for is carried over to Redis once it answers.) Use it when the combined
// rate is a hard limit (a contract, an API key shared by all workers) and
// a failed request is cheaper than an extra one. By default a process
// paces on its own while Redis does not answer, as WithFailOpen says.
func WithFailClosed() Option {
	return func(o *options) { o.failClosed = true }
}

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

// resolve applies opts over the defaults and returns the settings with
// their mode, or the first option that cannot be used.
func resolve(opts []Option) (options, mode, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.timeout < 0:
		return o, 0, fmt.Errorf("redislimiter: WithTimeout: must not be negative, got %v", o.timeout)
	case o.probeInterval < 0:
		return o, 0, fmt.Errorf("redislimiter: WithProbeInterval: must not be negative, got %v", o.probeInterval)
	case strings.Contains(o.prefix, "{"):
		return o, 0, fmt.Errorf("redislimiter: WithPrefix(%q): must not hold \"{\": Redis Cluster would hash the prefix's {...} rather than each domain's, putting every domain in one slot", o.prefix)
	case o.failOpen && o.failClosed:
		return o, 0, errors.New("redislimiter: WithFailOpen and WithFailClosed both given")
	}
	if o.prefix == "" {
		o.prefix = "polite:"
	}
	if o.timeout == 0 {
		o.timeout = 100 * time.Millisecond
	}
	if o.probeInterval == 0 {
		o.probeInterval = 100 * time.Millisecond
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	m := modeFallback
	switch {
	case o.failOpen:
		m = modeFailOpen
	case o.failClosed:
		m = modeFailClosed
	}
	return o, m, nil
}
