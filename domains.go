package polite

import (
	"hash/maphash"
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

// domainTable finds or creates the domain of a key. It holds about
// maxDomains domains at most, but for those with a request pending: a new
// domain forgets the least recently used ones that have none, in the part
// of the table its key falls in. Calls for keys of different parts do not
// wait for each other.
type domainTable struct {
	seed  maphash.Seed
	parts []tablePart
	setUp func(d *domain, key string)
}

type tablePart struct {
	mu         sync.Mutex
	domains    lru.List[string, domain]
	maxDomains int
}

// look is how many of the least recently used domains a new one looks at
// to make room.
const look = 4

// init makes the table hold at most maxDomains domains: in 16 parts, or in
// one if that would leave a part fewer than 64.
func (tab *domainTable) init(maxDomains int, setUp func(d *domain, key string)) {
	n := 16
	if maxDomains < 64*n {
		n = 1
	}
	tab.seed, tab.parts, tab.setUp = maphash.MakeSeed(), make([]tablePart, n), setUp
	for i := range tab.parts {
		tab.parts[i].maxDomains = maxDomains / n
	}
}

func (tab *domainTable) part(key string) *tablePart {
	if len(tab.parts) == 1 {
		return &tab.parts[0]
	}
	return &tab.parts[maphash.String(tab.seed, key)%uint64(len(tab.parts))]
}

// acquire returns key's domain with one more pending request, which the
// caller must release.
func (tab *domainTable) acquire(key string) *domain {
	p := tab.part(key)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.domains.Get(key); e != nil {
		e.Value.pending.Add(1)
		return &e.Value
	}
	// Only acquire adds a pending request, under the lock: a domain with
	// none now has none until it is forgotten.
	p.domains.Trim(p.maxDomains-1, look, func(e *lru.Entry[string, domain]) bool {
		return e.Value.pending.Load() == 0
	})
	e := p.domains.Add(strings.Clone(key))
	d := &e.Value
	tab.setUp(d, e.Key)
	d.pending.Store(1)
	return d
}

// load returns key's domain, if the table holds it.
func (tab *domainTable) load(key string) (*domain, bool) {
	p := tab.part(key)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.domains.Peek(key); e != nil {
		return &e.Value, true
	}
	return nil, false
}

// all returns every domain the table holds.
func (tab *domainTable) all() []*domain {
	var out []*domain
	for i := range tab.parts {
		p := &tab.parts[i]
		p.mu.Lock()
		for e := range p.domains.All {
			out = append(out, &e.Value)
		}
		p.mu.Unlock()
	}
	return out
}

// isLoopback reports whether key names a loopback host.
func isLoopback(key string) bool {
	if key == "localhost" || strings.HasSuffix(key, ".localhost") {
		return true
	}
	ip := parseIP(key)
	return ip != nil && ip.IsLoopback()
}
