package polite

import (
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// limitInForce is a limit as it paces keys under the limits in force: the
// limit, the rule the limiter reads it as, and its MaxConcurrent (0: no
// cap). The keys it paces share it; each counts its own places (a
// places.Pool).
type limitInForce struct {
	limit         *config.Limit
	rule          limiter.Rule
	maxConcurrent int
	set           *limitSet // the limits it was made under
}

func newLimitInForce(l *config.Limit, maxPause time.Duration, set *limitSet) *limitInForce {
	lim := &limitInForce{limit: l, rule: limiter.RuleOf(*l), set: set}
	lim.rule.MaxPause = maxPause
	if !l.Disabled {
		lim.maxConcurrent = l.MaxConcurrent
	}
	return lim
}

// inForceOf returns l, one of ls's limits, in force: made once for the
// keys it paces.
func (ls *limitSet) inForceOf(l *config.Limit, maxPause time.Duration) *limitInForce {
	if lim, ok := ls.inForce.Load(l); ok {
		return lim.(*limitInForce)
	}
	lim, _ := ls.inForce.LoadOrStore(l, newLimitInForce(l, maxPause, ls))
	return lim.(*limitInForce)
}

// currentLimit returns the limit in force that ptr holds for key in scope,
// looked up anew if the limits in force have changed since ptr was set;
// nil if scope, a server or the global scope, is no longer in force.
func (t *Transport) currentLimit(ptr *atomic.Pointer[limitInForce], scope, key string) *limitInForce {
	for {
		lim := ptr.Load()
		ls := t.limits.Load()
		if lim != nil && lim.set == ls {
			return lim
		}
		l := ls.limitOf(scope, key)
		if l == nil {
			return nil
		}
		fresh := ls.inForceOf(l, t.maxPause)
		if ptr.CompareAndSwap(lim, fresh) {
			return fresh
		}
	}
}
