package redislimiter

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Options configures a Limiter made by New. The zero Options is the
// default: every field's doc says what its zero value means.
type Options struct {
	// Prefix starts every key the Limiter writes; "polite:" when empty. A
	// domain's keys are Prefix + "{domain}:state", Prefix +
	// "{domain}:starts" (the starts its quotas count) and Prefix +
	// "{domain}:last" (its latest start), one hash slot per domain on
	// Redis Cluster. Processes
	// that share a pace must use the same prefix. It must not hold "{":
	// Redis Cluster hashes the first {...} of a key, so a prefix such as
	// "app:{x}:" would put every domain in one slot.
	Prefix string
	// Timeout bounds each call to Redis, whatever the client's own
	// timeouts; 100ms when zero. A call that takes longer counts as Redis
	// being unavailable. Keep it short: a request waits for it before it
	// waits for its turn. Calls that start close together share the timer
	// that ends them, so a call may last up to a sixteenth longer.
	Timeout time.Duration
	// ProbeInterval is how often a Limiter whose Redis does not answer
	// tries it again in the background, with a reservation on a key of
	// its own (not a PING, which a full Redis still answers); 100ms when
	// zero. The shared pace comes back at most about one interval after
	// that call works. With a *redis.Client, each try first dials Redis
	// (for a Sentinel-managed client, asking a Sentinel where the primary
	// is), and goes no further while that fails.
	ProbeInterval time.Duration
	// Logger is where the Limiter logs that Redis stopped answering (once,
	// at Warn) and that it answers again (once, at Info); slog.Default()
	// when nil. For silence, use slog.New(slog.DiscardHandler).
	Logger *slog.Logger
	// FailOpen makes a Limiter stop pacing while Redis does not answer:
	// requests go at once, and their reservations are marked Degraded. Use
	// it when Redis sits in front of servers you own, or when being late
	// costs more than a burst of requests; never for third-party sites,
	// where a burst from every worker at once is what pacing exists to
	// prevent.
	//
	// By default (neither FailOpen nor FailClosed) each process paces on
	// its own with the same limits, in a limiter.Memory: the right choice
	// for crawling other people's sites, since each domain then sees at
	// most the number of processes times its rate, and no request fails.
	FailOpen bool
	// FailClosed makes Reserve, State and a reservation's Cancel and
	// Confirm fail with an error wrapping ErrUnavailable while Redis does
	// not answer, so that no request goes unpaced and none goes faster
	// than the shared pace allows. (Observe still succeeds: the pause a
	// server asked for is carried over to Redis once it answers.) Use it
	// when the combined rate is a hard limit (a contract, an API key shared
	// by all workers) and a failed request is cheaper than an extra one.
	FailClosed bool
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

// resolved is o with its defaults filled in, and its mode; or the first
// field that cannot be used.
func (o Options) resolved() (Options, mode, error) {
	switch {
	case o.Timeout < 0:
		return o, 0, fmt.Errorf("redislimiter: Options.Timeout: must not be negative, got %v", o.Timeout)
	case o.ProbeInterval < 0:
		return o, 0, fmt.Errorf("redislimiter: Options.ProbeInterval: must not be negative, got %v", o.ProbeInterval)
	case strings.Contains(o.Prefix, "{"):
		return o, 0, fmt.Errorf("redislimiter: Options.Prefix %q: must not hold \"{\": Redis Cluster would hash the prefix's {...} rather than each domain's, putting every domain in one slot", o.Prefix)
	case o.FailOpen && o.FailClosed:
		return o, 0, errors.New("redislimiter: Options: FailOpen and FailClosed both set")
	}
	if o.Prefix == "" {
		o.Prefix = "polite:"
	}
	if o.Timeout == 0 {
		o.Timeout = 100 * time.Millisecond
	}
	if o.ProbeInterval == 0 {
		o.ProbeInterval = 100 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := modeFallback
	switch {
	case o.FailOpen:
		m = modeFailOpen
	case o.FailClosed:
		m = modeFailClosed
	}
	return o, m, nil
}
