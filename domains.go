package polite

import (
	"sync/atomic"

	"github.com/polite-go/polite/internal/counters"
	"github.com/polite-go/polite/internal/domains"
	"github.com/polite-go/polite/internal/names"
	"github.com/polite-go/polite/internal/places"
	"github.com/polite-go/polite/limiter"
)

// domain is what the Transport keeps for one key. Its flags share one
// word beside the claim, and its failures, which most domains never have,
// take a pointer, so that a tracked domain's table entry fits a 160-byte
// block instead of 176. What every request writes (the count of its
// places, its claim, its counters) lies together, the fields requests
// only read after it, so that requests on two cores contend for fewer
// cache lines.
type domain struct {
	places   places.Pool   // its requests that hold a place under MaxConcurrent
	claim    domains.Claim // requests between acquire and their end
	flags    atomic.Uint32 // flagObserving, flagGivenUp, flagExempt
	stats    counters.Counters
	failures atomic.Pointer[failures] // failed answers in a row, nil until the first; see WithMaxErrors
	key      string
	inForce  atomic.Pointer[limitInForce] // its limit's; see Transport.currentLimit
}

// A domain's flags, each a bit of domain.flags: three atomic.Bools would
// take 12 bytes.
const (
	flagObserving uint32 = 1 << iota // a throttled response came: observe each response, as the next success ends a backoff
	flagGivenUp                      // WithMaxErrors gave it up
	flagExempt                       // never paced: no host, or a loopback host WithLoopbackExempt exempts
)

// has reports whether d's flag is set.
func (d *domain) has(flag uint32) bool { return d.flags.Load()&flag != 0 }

// set sets d's flag to on, and reports whether that changed it.
func (d *domain) set(flag uint32, on bool) bool {
	if on {
		return d.flags.Or(flag)&flag == 0
	}
	return d.flags.And(^flag)&flag != 0
}

// request is a Request to the limiter for d under lim, with no MaxWait.
func (d *domain) request(lim *limitInForce) limiter.Request {
	return limiter.Request{Key: d.key, Rule: &lim.rule, LastStart: d.stats.LastRequest()}
}

// unpaced reports whether requests to d go unpaced under lim.
func (d *domain) unpaced(lim *limitInForce) bool { return d.has(flagExempt) || lim.limit.Disabled }

// maxConcurrent is the MaxConcurrent of d under lim: 0, no cap, if d is
// exempt.
func (d *domain) maxConcurrent(lim *limitInForce) int {
	if d.has(flagExempt) {
		return 0
	}
	return lim.maxConcurrent
}

// finish ends a sent request: its place and its domain are free again.
func (d *domain) finish() {
	d.stats.Finished()
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
	d.set(flagExempt, (t.loopbackExempt && names.Loopback(key)) || key == noHostKey)
	t.currentLimit(d)
}

// newDomain returns a domain of key that the table does not hold.
func (t *Transport) newDomain(key string) *domain {
	d := new(domain)
	t.setUpDomain(d, key)
	return d
}
