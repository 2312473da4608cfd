// Package domains is the Transport's table of the domains it tracks.
package domains

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/polite-go/polite/internal/lru"
)

// Claim counts the requests that claim a domain: a domain that none
// claims may be forgotten. Its zero value counts none. It takes 4 bytes,
// which leaves room beside it for a flag of the domain's: no process
// claims a domain for 2^31 requests at once.
type Claim struct{ pending atomic.Int32 }

// Release ends one request's claim, which Table.Acquire made.
func (c *Claim) Release() { c.pending.Add(-1) }

// Domain is what a Table needs of its values: a pointer to V that has its
// Claim.
type Domain[V any] interface {
	*V
	Claimed() *Claim
}

// Table finds or creates the value of a domain's key. It holds about max
// domains at most, but for those a request claims: a new domain forgets
// the least recently used ones that none claims, in the part of the table
// its key falls in. Calls for keys of different parts do not wait for each
// other. Each domain takes one allocation, and one for the copy of its key.
//
// A Table is safe for concurrent use; make it with New.
type Table[V any, P Domain[V]] struct {
	seed  maphash.Seed
	parts []part[V, P]
	setUp func(v P, key string)
}

type part[V any, P Domain[V]] struct {
	mu      sync.Mutex
	domains lru.List[string, V]
	max     int
}

// look is how many of the least recently used domains a new one looks at
// to make room.
const look = 4

// New returns a table of at most about max domains, in 16 parts, or in
// one if that would leave a part fewer than 64. setUp makes a new value
// the domain of key; key is a copy the table holds.
func New[V any, P Domain[V]](max int, setUp func(v P, key string)) *Table[V, P] {
	n := 16
	if max < 64*n {
		n = 1
	}
	tab := &Table[V, P]{seed: maphash.MakeSeed(), parts: make([]part[V, P], n), setUp: setUp}
	for i := range tab.parts {
		tab.parts[i].max = max / n
	}
	return tab
}

func (tab *Table[V, P]) part(key string) *part[V, P] {
	if len(tab.parts) == 1 {
		return &tab.parts[0]
	}
	return &tab.parts[maphash.String(tab.seed, key)%uint64(len(tab.parts))]
}

// Acquire returns key's domain, claimed by one more request, which must
// release it.
func (tab *Table[V, P]) Acquire(key string) P {
	p := tab.part(key)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.domains.Get(key); e != nil {
		v := P(&e.Value)
		v.Claimed().pending.Add(1)
		return v
	}
	// Only Acquire adds a claim, under the lock: a domain that none claims
	// now stays so until it is forgotten.
	p.domains.Trim(p.max-1, look, func(e *lru.Entry[string, V]) bool {
		return P(&e.Value).Claimed().pending.Load() == 0
	})
	e := p.domains.Add(strings.Clone(key))
	v := P(&e.Value)
	tab.setUp(v, e.Key)
	v.Claimed().pending.Store(1)
	return v
}

// Load returns key's domain, if the table holds it.
func (tab *Table[V, P]) Load(key string) (P, bool) {
	p := tab.part(key)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.domains.Peek(key); e != nil {
		return &e.Value, true
	}
	return nil, false
}

// All returns every domain the table holds.
func (tab *Table[V, P]) All() []P {
	var out []P
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
