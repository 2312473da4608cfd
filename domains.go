package polite

import (
	"cmp"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/internal/readmap"
	"github.com/polite-go/polite/internal/record"
	"github.com/polite-go/polite/limiter"
)

// domain is what the Transport keeps for one key.
type domain struct {
	// Every request writes pending, lastUsed and the first counters of
	// stats: they come first, so that a request dirties one cache line of
	// its domain, not several.
	pending  atomic.Int64 // requests between lookup and their end
	lastUsed atomic.Int64 // unix nanoseconds, to within usedGrain
	stats    record.Recorder

	evicted   atomic.Bool
	listening atomic.Bool // a throttled response came: the next success ends a backoff
	key       string
	exempt    bool                 // never paced: no host, or a loopback host WithLoopbackExempt exempts
	pace      atomic.Pointer[pace] // its limit's; see Transport.currentPace
}

// request is a Request to the limiter for d under p, with no MaxWait.
func (d *domain) request(p *pace) limiter.Request {
	return limiter.Request{Key: d.key, Rule: &p.rule}
}

// unpaced reports whether requests to d go unpaced under p.
func (d *domain) unpaced(p *pace) bool { return d.exempt || p.limit.Disabled }

// usedGrain is how precisely a domain knows when it was last used: as
// precisely as a sweep needs to find the least recently used, and seldom
// enough that a busy domain's requests rarely write the time.
const usedGrain = time.Millisecond

// used notes that d was used at t.
func (d *domain) used(t time.Time) {
	if n := t.UnixNano(); n-d.lastUsed.Load() >= int64(usedGrain) {
		d.lastUsed.Store(n)
	}
}

// finish ends a sent request under p: its slot and its domain are free
// again.
func (d *domain) finish(p *pace) {
	d.stats.InFlight(-1)
	p.giveSlot()
	d.release()
}

// release ends a request's claim on d, which acquire made.
func (d *domain) release() { d.pending.Add(-1) }

// domainTable finds or creates the domain of a key. Lookups take no lock.
// It holds at most maxDomains domains: past that, a sweep forgets the
// least recently used ones that have no request pending.
type domainTable struct {
	m          readmap.Map[*domain]
	count      atomic.Int64
	maxDomains int
	sweeping   sync.Mutex
	newDomain  func(key string) *domain
	hosts      *hostDomains // nil unless the key depends on the host alone
}

// acquire returns key's domain with one more pending request, which the
// caller must release.
func (tab *domainTable) acquire(key string) *domain {
	for {
		d, ok := tab.m.Load(key)
		if !ok {
			fresh := tab.newDomain(key)
			fresh.pending.Store(1) // claimed before a sweep can see it
			fresh.lastUsed.Store(time.Now().UnixNano())
			if d, ok = tab.m.LoadOrStore(key, fresh); !ok {
				if tab.count.Add(1) > int64(tab.maxDomains) {
					tab.sweep()
				}
				return d
			}
		}
		if d.tryAcquire() {
			return d
		}
		// A sweep is evicting d: in a moment it either forgets d or keeps
		// it. Only the sweep may forget it, or a request could claim d after
		// the sweep kept it and then find another domain in its place.
		runtime.Gosched()
	}
}

// tryAcquire claims d for one more request, unless d has been evicted.
func (d *domain) tryAcquire() bool {
	d.pending.Add(1)
	if d.evicted.Load() {
		d.pending.Add(-1)
		return false
	}
	return true
}

func (tab *domainTable) load(key string) (*domain, bool) { return tab.m.Load(key) }

func (tab *domainTable) all() []*domain {
	var out []*domain
	tab.m.Range(func(_ string, d *domain) bool {
		out = append(out, d)
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
	forgotten := map[*domain]bool{}
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
		forgotten[d] = true
		excess--
	}
	tab.m.DeleteFunc(func(_ string, d *domain) bool { return forgotten[d] })
	if tab.hosts != nil {
		tab.hosts.forget(forgotten)
	}
	tab.count.Add(-int64(len(forgotten)))
}

// isLoopback reports whether key names a loopback host.
func isLoopback(key string) bool {
	if key == "localhost" || strings.HasSuffix(key, ".localhost") {
		return true
	}
	ip := net.ParseIP(key)
	return ip != nil && ip.IsLoopback()
}
