// Package limiter decides when a request to a domain may go.
package limiter

import (
	"context"
	"errors"
	"time"

	"github.com/polite-go/polite/config"
)

// Limiter keeps the pace of every key (a domain): it decides each
// request's turn under the key's Rule and what its server asked for, and
// observes what the server says. Every rule of a key is decided in one
// step, so that a request never holds a turn of one rule while it waits on
// another. Implementations measure time on their own clock and speak in
// durations, so that callers never mix clocks: Memory uses this process's
// clock, redislimiter uses Redis's TIME.
//
// Most callers use Wait, which reserves a turn, sleeps until it comes and
// confirms its departure (the gate: see Turn.Confirm). Implementations
// must be safe for concurrent use. Requests, reservations and observations go by value, so that a call through the
// interface puts nothing on the heap.
type Limiter interface {
	// Reserve holds the earliest turn every rule of r.Key allows and
	// says how long to wait for it. If the wait would exceed r.MaxWait
	// (when positive), it holds nothing: the Reservation's OK is false
	// and its Wait the wait it would have needed.
	Reserve(ctx context.Context, r Request) (Reservation, error)
	// Observe takes in what r.Key's server said: a response (pauses it
	// asked for, backoff after a 429 or while the server fails, adaptive
	// pacing), a transport failure, or a robots.txt's Crawl-delay. It
	// returns how much later the key's pause now ends because of o.
	Observe(ctx context.Context, r Request, o Observation) (time.Duration, error)
	// State reports how r.Key stands now, holding nothing.
	State(ctx context.Context, r Request) (State, error)
}

// ErrWaitTooLong is the error of Wait for a turn that would come later
// than the Request's MaxWait allows.
var ErrWaitTooLong = errors.New("limiter: wait longer than the maximum allowed")

// Rule is what paces one key: a config.Limit's pacing settings as a
// Limiter reads them, with the cap on server pauses that the Transport
// sets for all domains. A Limiter only reads it; it is a plain value.
//
// Two types hold these settings because two readers do: a config.Limit is
// what a user writes (options, the JSON file, the environment), with
// defaults still to inherit and the Transport's own settings
// (MaxConcurrent, Disabled); a Rule is complete, holds only what a Limiter
// reads, and adds MaxPause, which the Transport sets for every domain
// (polite.WithMaxPause). RuleOf makes one from the other.
type Rule struct {
	// Rate is the token bucket's refill rate per second; 0 means no bucket.
	Rate float64
	// Burst is the bucket's size.
	Burst int
	// MinDelay is the least time between two starts.
	MinDelay time.Duration
	// Jitter is the upper bound of the random extra gap between two starts.
	Jitter time.Duration
	// Quotas are sliding windows every start must fit in. A key's starts
	// are kept for the longest window a rule for it had, for that window
	// after a rule goes without it: a quota changed, or removed and put
	// back, counts the starts made meanwhile.
	Quotas []config.Quota
	// Adaptive makes the gap between starts follow the server's latency,
	// never below the pace the other rules set (Scrapy's AutoThrottle).
	Adaptive bool
	// Target is how many requests adaptive pacing keeps in flight at the
	// server; 0 means 1.
	Target float64
	// AdaptiveStart is the adaptive gap before the first response: the
	// gap adaptive pacing starts from. 0 means the pace the other rules set.
	AdaptiveStart time.Duration
	// AdaptiveMax is the longest gap adaptive pacing sets, unless the
	// other rules set a slower pace; 0 means a minute.
	AdaptiveMax time.Duration
	// MaxPause caps how long a server can pause the key (Retry-After,
	// RateLimit headers, backoff); 0 means DefaultMaxPause.
	MaxPause time.Duration
	// ErrorStatuses are the response statuses that back the key off as a
	// 429 without Retry-After does, 0 standing for a transport failure
	// (see Observation.Failed); nil means 500, 502, 503, 504 and 0, an
	// empty list none. See config.Limit.ErrorStatuses.
	ErrorStatuses []int
}

// DefaultMaxPause is the longest pause a server can impose on a key whose
// Rule sets no MaxPause, and the Transport's unless polite.WithMaxPause
// says otherwise.
const DefaultMaxPause = 10 * time.Minute

// RuleOf returns the Rule that enforces l.
func RuleOf(l config.Limit) Rule {
	return Rule{Rate: l.RequestsPerSecond, Burst: l.Burst, MinDelay: l.MinDelay, Jitter: l.Jitter,
		Quotas: l.Quotas, Adaptive: l.Adaptive, Target: l.TargetConcurrency,
		AdaptiveStart: l.AdaptiveStartDelay, AdaptiveMax: l.AdaptiveMaxDelay, ErrorStatuses: l.ErrorStatuses}
}

// Request asks for a turn, or about one, for one key. A Limiter only
// reads it.
type Request struct {
	// Key names the domain.
	Key string
	// Rule paces the key; nil means no rule but the pauses servers ask for.
	Rule *Rule
	// MaxWait is the longest acceptable wait; 0 means any wait is acceptable.
	MaxWait time.Duration
	// LastStart is the latest start of a request to Key that the caller
	// knows of; zero if none. A Limiter that holds no state for Key (it
	// never had one, or it forgot one that had recovered) counts it as a
	// start, so that a Rule made stricter since keeps its gaps from it.
	LastStart time.Time
}

// EffectiveRule returns the Rule that paces r's key: r.Rule, or when it
// is nil a zero Rule, which paces nothing but the pauses servers ask for.
// A Limiter only reads it.
func (r *Request) EffectiveRule() *Rule {
	if r.Rule == nil {
		return &noRule
	}
	return r.Rule
}

// noRule is the Rule of a Request without one.
var noRule Rule

// Reservation is a held turn, or the refusal of one. Its Limiter makes
// it (another Limiter than Memory with Granted or Refused); the caller
// starts its request when Wait has passed, or gives the turn back with
// Cancel. The zero Reservation is a refusal that holds nothing. A
// Reservation is not safe for concurrent use.
type Reservation struct {
	ok       bool
	degraded bool
	wait     time.Duration
	reason   Reason
	start    time.Time
	turn     Turn
	// What Memory needs to find the turn again.
	state *keyState
	key   string // the state's key, for Persist's commits
	rule  *Rule
	id    uint64
	at    int64
	begun bool // its departure was noted when it was reserved, at start
}

// Granted returns the Reservation of a turn held wait from now, for
// the rule reason names (empty when none), that starts at start on this
// process's clock (zero when the Limiter does not say: the caller then
// takes now plus wait). turn gives it back and confirms it; nil when
// there is nothing to give back or confirm.
func Granted(wait time.Duration, reason Reason, start time.Time, turn Turn) Reservation {
	return Reservation{ok: true, wait: wait, reason: reason, start: start, turn: turn}
}

// Refused returns the Reservation of a turn not held because it would
// have come wait from now, past the request's MaxWait, for the rule reason
// names.
func Refused(wait time.Duration, reason Reason) Reservation {
	return Reservation{wait: wait, reason: reason}
}

// Degrade returns r marked as made by a fallback because the shared
// store did not answer: see Reservation.Degraded.
func Degrade(r Reservation) Reservation {
	r.degraded = true
	return r
}

// OK reports whether the turn is held: false when its wait would have
// exceeded the request's MaxWait, and then nothing is held.
func (r *Reservation) OK() bool { return r.ok }

// Degraded reports whether a fallback made the reservation because the
// shared store did not answer.
func (r *Reservation) Degraded() bool { return r.degraded }

// Wait is the planned wait: how long from the reservation to its turn
// (moved later by a Confirm that holds the request back); when OK is
// false, the wait the turn would have needed. The time a request waited
// in all is Waited.Wait.
func (r *Reservation) Wait() time.Duration { return r.wait }

// Reason names the rule that set the wait; empty when there is none.
func (r *Reservation) Reason() Reason { return r.reason }

// Start is when the turn starts, on this process's clock, as far as the
// Limiter knows it without reading the clock again (once Confirm let the
// request go, when it left); zero if it does not say.
func (r *Reservation) Start() time.Time { return r.start }

// Turn returns the Turn the reservation's Limiter gave it (to Granted):
// how a Limiter finds its own turn in a reservation it made. It is nil
// when there is nothing to give back or confirm.
func (r *Reservation) Turn() Turn { return r.turn }

// Turn is how a Limiter other than Memory gives its reservations back and
// confirms their departure: it passes one to Granted, and Reservation's
// Cancel and Confirm call it. Memory has its own.
type Turn interface {
	// Cancel gives back res, whose request will not be sent (or whose
	// departure Confirm noted but which did not leave), as far as that
	// lets no later request go sooner than the rules allow.
	Cancel(ctx context.Context, res *Reservation) error
	// Confirm is the departure gate: the caller calls it for every
	// reservation, waiting or not, as the very last step before its
	// request leaves, and sends the request as soon as it returns 0. A
	// turn counts from its departure, not from its plan: Confirm checks,
	// under rule (the Rule in force now; nil for the one res was reserved
	// with), that the gap from the key's latest real departure holds, and
	// notes this one; a departure later than planned moves the turns after
	// it. It returns 0 when the request may leave now, or how much longer
	// it must wait (the key was paused meanwhile, an earlier request left
	// late, the rule got stricter), noting nothing: it then sets *res to
	// the turn it waits for (with Granted), and the caller sleeps and
	// calls Confirm again.
	Confirm(ctx context.Context, res *Reservation, rule *Rule) (time.Duration, error)
}

// Cancel gives the turn back: see Turn.
func (r *Reservation) Cancel(ctx context.Context) error {
	if !r.ok || r.turn == nil {
		return nil
	}
	return r.turn.Cancel(ctx, r)
}

// Confirm is the departure gate under rule (nil for the rule r was
// reserved with): see Turn.
func (r *Reservation) Confirm(ctx context.Context, rule *Rule) (time.Duration, error) {
	if !r.ok || r.turn == nil {
		return 0, nil
	}
	return r.turn.Confirm(ctx, r, rule)
}

// Observation is what a server said about a key.
type Observation struct {
	// Status is the response's status code; 0 when the observation is a
	// robots.txt's Crawl-delay or a transport failure.
	Status int
	// Failed says that the request got no response: its round trip failed
	// at the transport (a timeout, a refused or reset connection, a failed
	// TLS handshake; not a cancelled context). It backs the key off when
	// the Rule's ErrorStatuses list 0, as they do by default.
	Failed bool
	// Sent is when the request was sent, and Latency how long its
	// response's headers took.
	Sent    time.Time
	Latency time.Duration
	// RetryAfter is the response's Retry-After; 0 if absent or void.
	RetryAfter time.Duration
	// RateLimit is how long until an exhausted RateLimit quota resets; 0
	// if none is exhausted.
	RateLimit time.Duration
	// Host names the robots.txt (scheme://host:port) whose Crawl-delay is
	// CrawlDelay, when Status is 0. A key keeps the longest Crawl-delay of
	// its hosts.
	Host       string
	CrawlDelay time.Duration
}

// State is how a key stands at one moment.
// A State is a copy: later changes of the key do not show in it.
type State struct {
	// Wait is how long a request asked for now would wait.
	Wait time.Duration
	// Reason names the rule that sets Wait.
	Reason Reason
	// Paused is how long the current pause still lasts; 0 if none.
	Paused time.Duration
	// PauseReason says who asked for the pause.
	PauseReason Reason
	// MinDelay is the least gap between two starts: the Rule's, or longer
	// where the server asked for more (Crawl-delay, adaptive pacing).
	MinDelay time.Duration
	// Quotas reports each quota of the rule, in order.
	Quotas []QuotaState
}

// QuotaState is what is left of one quota.
// A QuotaState is a plain value.
type QuotaState struct {
	// Limit and Window are the quota's: at most Limit starts in any Window.
	Limit  int
	Window time.Duration
	// Remaining is how many starts the window still allows.
	Remaining int
	// NextFree is when the window frees its next used slot, on this
	// process's clock; zero when none is used.
	NextFree time.Time
}

// Reason names what makes a request wait, or who asked for a pause.
type Reason string

// The reasons a Limiter gives.
const (
	ReasonRate       Reason = "rate"        // the token bucket is empty
	ReasonMinDelay   Reason = "min_delay"   // too soon after the previous start
	ReasonJitter     Reason = "jitter"      // the random extra gap
	ReasonQuota      Reason = "quota"       // a sliding-window quota is used up
	ReasonQueue      Reason = "queue"       // earlier requests are still waiting
	ReasonCrawlDelay Reason = "crawl-delay" // the gap robots.txt's Crawl-delay sets
	ReasonAdaptive   Reason = "adaptive"    // the gap adaptive pacing sets
	ReasonRetryAfter Reason = "retry-after" // a pause a response's Retry-After asked for
	ReasonRateLimit  Reason = "ratelimit"   // a pause a RateLimit header saying no request remains asked for
	ReasonBackoff    Reason = "backoff"     // a pause after a 429 that said nothing of when to come back
	ReasonErrors     Reason = "errors"      // backoff while the server fails (the Rule's ErrorStatuses, transport failures)
	ReasonShared     Reason = "shared"      // a pause another worker sharing the limiter asked for
)
