package polite

import (
	"strings"
	"sync/atomic"

	"github.com/polite-go/polite/internal/counters"
	"github.com/polite-go/polite/internal/domains"
	"github.com/polite-go/polite/limiter"
)

// domain is what the Transport keeps for one key.
type domain struct {
	claim     domains.Claim // requests between acquire and their end
	stats     counters.Counters
	listening atomic.Bool // a throttled response came: the next success ends a backoff
	failures  failures    // failed answers in a row; see WithMaxErrors
	exempt    bool        // never paced: no host, or a loopback host WithLoopbackExempt exempts
	key       string
	pace      atomic.Pointer[pace] // its limit's; see Transport.currentPace
}

// request is a Request to the limiter for d under p, with no MaxWait.
func (d *domain) request(p *pace) limiter.Request {
	return limiter.Request{Key: d.key, Rule: &p.rule, LastStart: d.stats.LastRequest()}
}

// unpaced reports whether requests to d go unpaced under p.
func (d *domain) unpaced(p *pace) bool { return d.exempt || p.limit.Disabled }

// finish ends a sent request under p: its slot and its domain are free
// again.
func (d *domain) finish(p *pace) {
	d.stats.InFlight(-1)
	p.giveSlot()
	d.release()
}

// release ends a request's claim on d, which acquire made.
func (d *domain) release() { d.claim.Release() }

// Claimed returns d's claim, for the domain table.
func (d *domain) Claimed() *domains.Claim { return &d.claim }

// isLoopback reports whether key names a loopback host.
func isLoopback(key string) bool {
	if key == "localhost" || strings.HasSuffix(key, ".localhost") {
		return true
	}
	ip := parseIP(key)
	return ip != nil && ip.IsLoopback()
}
