package polite

import (
	"strings"
	"sync/atomic"

	"github.com/polite-go/polite/internal/readmap"
)

// hostCache remembers a value of type V for each of at most limit URL
// hosts, and forgets them all when it is full. Lookups, through m, take no
// lock.
type hostCache[V any] struct {
	m     readmap.Map[V] // URL host -> its value
	n     atomic.Int64
	limit int64
}

// store notes v for host, unless host has a value already.
func (c *hostCache[V]) store(host string, v V) {
	if c.n.Add(1) > c.limit {
		c.m.DeleteFunc(func(string, V) bool { return true })
		c.n.Store(1)
	}
	// A clone: host is most often part of a whole URL, which would stay
	// in memory with it.
	if _, known := c.m.LoadOrStore(strings.Clone(host), v); known {
		c.n.Add(-1)
	}
}

// deleteFunc forgets the hosts whose values del reports.
func (c *hostCache[V]) deleteFunc(del func(V) bool) {
	c.m.DeleteFunc(func(_ string, v V) bool {
		if del(v) {
			c.n.Add(-1)
			return true
		}
		return false
	})
}

// hostDomains remembers the domain of each recent host, for a Transport
// keyed by its default key function, whose key depends on the URL's host
// alone: a request to a known host finds its domain in one lookup, with no
// call of the key function.
type hostDomains struct {
	hostCache[*domain]
}

// acquire returns host's domain with one more pending request, which the
// caller must release, or nil if host is not known or its domain is being
// evicted.
func (h *hostDomains) acquire(host string) *domain {
	if d, ok := h.m.Load(host); ok && d.tryAcquire() {
		return d
	}
	return nil
}

// forget forgets the hosts of the domains a sweep forgot.
func (h *hostDomains) forget(forgotten map[*domain]bool) {
	h.deleteFunc(func(d *domain) bool { return forgotten[d] })
}
