package polite

import (
	"sync"
	"sync/atomic"
)

// hostCache maps URL hosts to their domains, for key functions that depend
// on the host alone. A lookup of a known host takes no lock and writes
// nothing: it reads an immutable map behind an atomic pointer, so lookups
// from many goroutines never slow each other down. New hosts go to a dirty
// map, under a lock, that holds every host; it replaces the read map once
// lookups have missed as often as it has hosts, so each host is copied a
// constant number of times on average. (This is sync.Map's original design,
// with string keys; sync.Map hashes its keys through interfaces.)
//
// It holds at most limit hosts: a store past that empties it first.
type hostCache struct {
	read   atomic.Pointer[map[string]*domain]
	mu     sync.Mutex
	dirty  map[string]*domain // nil, or all of read's hosts and the new ones
	misses int
	limit  int
}

func (c *hostCache) load(host string) (*domain, bool) {
	if m := c.read.Load(); m != nil {
		if d, ok := (*m)[host]; ok {
			return d, true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.dirty[host]
	c.misses++
	if c.dirty != nil && c.misses >= len(c.dirty) {
		promoted := c.dirty
		c.read.Store(&promoted)
		c.dirty, c.misses = nil, 0
	}
	return d, ok
}

func (c *hostCache) store(host string, d *domain) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirty == nil {
		c.dirty = make(map[string]*domain)
		if m := c.read.Load(); m != nil && len(*m) < c.limit {
			for h, d := range *m {
				c.dirty[h] = d
			}
		}
	}
	if len(c.dirty) >= c.limit {
		c.read.Store(nil)
		c.dirty, c.misses = make(map[string]*domain), 0
	}
	c.dirty[host] = d
}

// clear forgets every host.
func (c *hostCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read.Store(nil)
	c.dirty, c.misses = nil, 0
}
