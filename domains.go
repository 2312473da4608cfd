package polite

import (
	"cmp"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/stats"
)

// domain is what the Transport keeps for one key.
type domain struct {
	key     string
	limit   *config.Limit
	unpaced bool          // disabled, or an exempt loopback host
	slots   chan struct{} // nil without MaxConcurrent
	stats   stats.Recorder

	lastUsed atomic.Int64 // unix nanoseconds
	pending  atomic.Int64 // requests between lookup and their end
	evicted  atomic.Bool
}

func (d *domain) rule() limiter.Rule { return limiter.RuleOf(*d.limit) }

// domainTable finds or creates the domain of a key. Lookups take no lock.
// It holds at most maxDomains domains: past that, a sweep forgets the
// least recently used ones that have no request pending.
type domainTable struct {
	m          sync.Map // key -> *domain
	count      atomic.Int64
	maxDomains int
	sweeping   sync.Mutex
	newDomain  func(key string) *domain
}

// acquire returns key's domain with one more pending request, which the
// caller must release.
func (tab *domainTable) acquire(key string, now time.Time) *domain {
	for {
		v, ok := tab.m.Load(key)
		if !ok {
			d := tab.newDomain(key)
			v, ok = tab.m.LoadOrStore(key, d)
			if !ok && tab.count.Add(1) > int64(tab.maxDomains) {
				tab.sweep()
			}
		}
		d := v.(*domain)
		d.pending.Add(1)
		if !d.evicted.Load() {
			d.lastUsed.Store(now.UnixNano())
			return d
		}
		d.pending.Add(-1)
		if tab.m.CompareAndDelete(key, d) {
			tab.count.Add(-1)
		}
	}
}

func (tab *domainTable) release(d *domain) { d.pending.Add(-1) }

func (tab *domainTable) load(key string) (*domain, bool) {
	v, ok := tab.m.Load(key)
	if !ok {
		return nil, false
	}
	return v.(*domain), true
}

func (tab *domainTable) all() []*domain {
	var out []*domain
	tab.m.Range(func(_, v any) bool {
		out = append(out, v.(*domain))
		return true
	})
	return out
}

// sweep forgets the least recently used idle domains until a quarter of
// the table is free. Only one sweep runs at a time; others skip.
func (tab *domainTable) sweep() {
	if !tab.sweeping.TryLock() {
		return
	}
	defer tab.sweeping.Unlock()
	domains := tab.all()
	slices.SortFunc(domains, func(a, b *domain) int {
		return cmp.Compare(a.lastUsed.Load(), b.lastUsed.Load())
	})
	excess := len(domains) - tab.maxDomains*3/4
	for _, d := range domains {
		if excess <= 0 {
			break
		}
		if d.pending.Load() != 0 {
			continue
		}
		d.evicted.Store(true)
		if d.pending.Load() != 0 {
			d.evicted.Store(false)
			continue
		}
		if tab.m.CompareAndDelete(d.key, d) {
			tab.count.Add(-1)
			excess--
		}
	}
}

// isLoopback reports whether key names a loopback host.
func isLoopback(key string) bool {
	if key == "localhost" || strings.HasSuffix(key, ".localhost") {
		return true
	}
	ip := net.ParseIP(key)
	return ip != nil && ip.IsLoopback()
}
