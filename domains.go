package polite

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/lru"
	"github.com/polite-go/polite/internal/record"
	"github.com/polite-go/polite/limiter"
)

// domain is what the Transport keeps for one key.
type domain struct {
	pending   atomic.Int64 // requests between acquire and their end
	stats     record.Recorder
	listening atomic.Bool // a throttled response came: the next success ends a backoff
	unpaced   bool        // disabled, or an exempt loopback host
	key       string
	limit     *config.Limit
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
func (d *domain) release() { d.pending.Add(-1) }

// domainTable finds or creates the domain of a key. It holds at most
// maxDomains domains, but for those with a request pending: a new domain
// forgets the least recently used ones that have none.
type domainTable struct {
	mu         sync.Mutex
	domains    lru.List[string, *domain]
	maxDomains int
	newDomain  func(key string) *domain
}

// look is how many of the least recently used domains a new one looks at
// to make room.
const look = 4

// acquire returns key's domain with one more pending request, which the
// caller must release.
func (tab *domainTable) acquire(key string) *domain {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	if e := tab.domains.Get(key); e != nil {
		e.Value.pending.Add(1)
		return e.Value
	}
	// Only acquire adds a pending request, under the lock: a domain with
	// none now has none until it is forgotten.
	tab.domains.Trim(tab.maxDomains-1, look, func(e *lru.Entry[string, *domain]) bool {
		return e.Value.pending.Load() == 0
	})
	d := tab.newDomain(strings.Clone(key))
	d.pending.Store(1)
	tab.domains.Add(d.key).Value = d
	return d
}

// load returns key's domain, if the table holds it.
func (tab *domainTable) load(key string) (*domain, bool) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	if e := tab.domains.Peek(key); e != nil {
		return e.Value, true
	}
	return nil, false
}

// all returns every domain the table holds.
func (tab *domainTable) all() []*domain {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	out := make([]*domain, 0, tab.domains.Len())
	for e := range tab.domains.All {
		out = append(out, e.Value)
	}
	return out
}

// isLoopback reports whether key names a loopback host.
func isLoopback(key string) bool {
	if key == "localhost" || strings.HasSuffix(key, ".localhost") {
		return true
	}
	ip := net.ParseIP(key)
	return ip != nil && ip.IsLoopback()
}
