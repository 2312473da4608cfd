package polite

import (
	"sync/atomic"

	"github.com/polite-go/polite/internal/counters"
	"github.com/polite-go/polite/internal/domains"
	"github.com/polite-go/polite/internal/names"
	"github.com/polite-go/polite/internal/places"
	"github.com/polite-go/polite/limiter"
)

// domain is what the Transport keeps for one key. Its flags sit beside
// the claim and at the end, so that a tracked domain's table entry fits a
// 176-byte block instead of 192: 237 B per tracked domain instead of 253.
type domain struct {
	claim     domains.Claim // requests between acquire and their end
	observing atomic.Bool   // a throttled response came: observe each response, as the next success ends a backoff
	stats     counters.Counters
	failures  failures // failed answers in a row; see WithMaxErrors
	key       string
	inForce   atomic.Pointer[limitInForce] // its limit's; see Transport.currentLimit
	places    places.Pool                  // its requests that hold a place under MaxConcurrent
	givenUp   atomic.Bool                  // WithMaxErrors gave it up
	exempt    bool                         // never paced: no host, or a loopback host WithLoopbackExempt exempts
}

// request is a Request to the limiter for d under lim, with no MaxWait.
func (d *domain) request(lim *limitInForce) limiter.Request {
	return limiter.Request{Key: d.key, Rule: &lim.rule, LastStart: d.stats.LastRequest()}
}

// unpaced reports whether requests to d go unpaced under lim.
func (d *domain) unpaced(lim *limitInForce) bool { return d.exempt || lim.limit.Disabled }

// maxConcurrent is the MaxConcurrent of d under lim: 0, no cap, if d is
// exempt.
func (d *domain) maxConcurrent(lim *limitInForce) int {
	if d.exempt {
		return 0
	}
	return lim.maxConcurrent
}

// finish ends a sent request: its place and its domain are free again.
func (d *domain) finish() {
	d.stats.InFlight(-1)
	d.places.Give()
	d.release()
}

// release ends a request's claim on d, which acquire made.
func (d *domain) release() { d.claim.Release() }

// Claimed returns d's claim, for the domain table.
func (d *domain) Claimed() *domains.Claim { return &d.claim }

// setUpDomain makes d the domain of key, under its limit.
func (t *Transport) setUpDomain(d *domain, key string) {
	d.key = key
	d.exempt = (t.loopbackExempt && names.Loopback(key)) || key == noHostKey
	t.currentLimit(d)
}

// newDomain returns a domain of key that the table does not hold.
func (t *Transport) newDomain(key string) *domain {
	d := new(domain)
	t.setUpDomain(d, key)
	return d
}
