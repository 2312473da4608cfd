package polite

import (
	"strings"
	"sync/atomic"

	"github.com/polite-go/polite/internal/domains"
	"github.com/polite-go/polite/internal/record"
	"github.com/polite-go/polite/limiter"
)

// domain is what the Transport keeps for one key.
type domain struct {
	claim     domains.Claim // requests between acquire and their end
	stats     record.Recorder
	listening atomic.Bool // a throttled response came: the next success ends a backoff
	unpaced   bool        // disabled, or an exempt loopback host
	key       string
	rule      *limiter.Rule // shared by the domains of one limit
	slots     chan struct{} // nil without MaxConcurrent
}

// request is a Request to the limiter for d, with no MaxWait.
func (d *domain) request() limiter.Request {
	return limiter.Request{Key: d.key, Rule: d.rule}
}

// finish ends a sent request: its slot and its domain are free again.
func (d *domain) finish() {
	d.stats.InFlight(-1)
	d.giveSlot()
	d.release()
}

func (d *domain) giveSlot() {
	if d.slots != nil {
		<-d.slots
	}
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
