// Package limiter decides when a request to a domain may go.
package limiter

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/config"
)

// Limiter schedules requests per key under a Rule. Every rule of a key is
// decided in one step, so that a request never holds a slot of one rule
// while it waits on another. Implementations measure time on their own
// clock and speak in durations relative to it, so that callers never mix
// clocks: the in-memory Memory uses this process's monotonic clock,
// redislimiter uses Redis's TIME.
//
// Implementations must be safe for concurrent use.
type Limiter interface {
	// Reserve claims the earliest start for a request to r.Key under
	// r.Rule and says how long to wait for it. If the wait would exceed
	// r.MaxWait (when positive), it claims nothing and returns a
	// Reservation with OK false and the wait it would have needed.
	Reserve(ctx context.Context, r Request) (Reservation, error)
	// Cancel gives back res, made for r, whose request will not be sent,
	// so that it does not delay later requests where that is still
	// possible.
	Cancel(ctx context.Context, r Request, res Reservation) error
	// Pause stops every request to key from starting before d from now.
	// A shorter pause never shortens a longer one.
	Pause(ctx context.Context, key string, d time.Duration) error
	// State reports how key stands under rule now, claiming nothing.
	State(ctx context.Context, key string, rule Rule) (State, error)
}

// Rule is the part of a domain's limit that a Limiter enforces.
// A Rule is a plain value; a Limiter only reads it.
type Rule struct {
	// Rate is the token bucket's refill rate per second; 0 means no bucket.
	Rate float64
	// Burst is the bucket's size.
	Burst int
	// MinDelay is the least time between two starts.
	MinDelay time.Duration
	// Jitter is the upper bound of the random extra gap between two starts.
	Jitter time.Duration
	// Quotas are sliding windows every start must fit in.
	Quotas []config.Quota
}

// RuleOf returns the Rule that enforces l.
func RuleOf(l config.Limit) Rule {
	return Rule{Rate: l.RequestsPerSecond, Burst: l.Burst, MinDelay: l.MinDelay, Jitter: l.Jitter, Quotas: l.Quotas}
}

// Request asks for a start for one request.
// A Request is a plain value; a Limiter only reads it.
type Request struct {
	// Key names the domain.
	Key string
	// Rule paces the key.
	Rule Rule
	// MaxWait is the longest acceptable wait; 0 means any wait is acceptable.
	MaxWait time.Duration
	// Handle, if not nil, is the caller's Handle for Key.
	Handle *Handle
	// Now is the caller's current time, if it has read the clock already.
	// Memory, which shares this process's clock, uses it instead of
	// reading the clock again; a limiter with a clock of its own ignores it.
	Now time.Time
}

// Handle saves a Limiter the lookup of a key's state: a caller that makes
// many requests for one key keeps one Handle for it and passes it in each
// Request for that key, never for another key. Memory binds the key's state
// to it; a Limiter that has no use for it ignores it. The zero Handle is
// ready to use; a Handle is safe for concurrent use.
type Handle struct {
	state atomic.Pointer[lockedState]
}

// Reservation is a claimed start, or the refusal of one.
// A Reservation is a plain value, safe to copy.
type Reservation struct {
	// OK is false when the wait would have exceeded the request's MaxWait;
	// then nothing was claimed.
	OK bool
	// Wait is how long the caller must wait before it starts the request.
	Wait time.Duration
	// Reason names the rule that set the wait, one of the Reason
	// constants; empty when there is no wait.
	Reason string
	// Degraded is true when a fallback made the reservation because the
	// shared store did not answer.
	Degraded bool
	// ID and Start identify the reservation to the Limiter that made it.
	ID    uint64
	Start int64
}

// State is how a key stands at one moment.
// A State is a copy: later changes of the key do not show in it.
type State struct {
	// Wait is how long a request asked for now would wait.
	Wait time.Duration
	// Reason names the rule that sets Wait.
	Reason string
	// Paused is how long the current pause still lasts; 0 if none.
	Paused time.Duration
	// Quotas reports each quota of the rule, in order.
	Quotas []QuotaState
}

// QuotaState is what is left of one quota.
// A QuotaState is a plain value.
type QuotaState struct {
	// Remaining is how many starts the window still allows.
	Remaining int
	// NextFree is how long until the window frees its next used slot; 0
	// when none is used.
	NextFree time.Duration
}

// The rules that can make a request wait, as Reservation.Reason names them.
const (
	ReasonRate     = "rate"      // the token bucket is empty
	ReasonMinDelay = "min_delay" // too soon after the previous start
	ReasonJitter   = "jitter"    // the random extra gap
	ReasonQuota    = "quota"     // a sliding-window quota is used up
	ReasonPause    = "pause"     // the server asked for a pause
	ReasonQueue    = "queue"     // earlier requests are still waiting
)
