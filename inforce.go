package polite

import (
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/scopes"
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
	set           *limitSet // the limits a domain's was looked up under; nil for a scope's, which its limitSet holds
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

// currentLimit returns d's limit in force, looked up anew if the limits
// in force have changed since d's was set.
func (t *Transport) currentLimit(d *domain) *limitInForce {
	for {
		lim := d.inForce.Load()
		ls := t.limits.Load()
		if lim != nil && lim.set == ls {
			return lim
		}
		fresh := ls.inForceOf(ls.domainLimit(d.key), t.maxPause)
		if d.inForce.CompareAndSwap(lim, fresh) {
			return fresh
		}
	}
}

// configured returns lim's limit as configured; nil for a nil lim, a
// scope not in force.
func (lim *limitInForce) configured() *config.Limit {
	if lim == nil {
		return nil
	}
	return lim.limit
}

// claim returns a claim on s, which a request acquired, under lim.
func (lim *limitInForce) claim(s *scopes.Scope) scopes.Claim {
	return scopes.Claim{Scope: s, Rule: &lim.rule, MaxConcurrent: lim.maxConcurrent}
}
