package polite

import (
	"strings"
	"sync/atomic"

	"github.com/polite-go/polite/internal/readmap"
)

// hostDomains remembers the domain of each recent host, for a Transport
// keyed by its default key function, whose key depends on the URL's host
// alone: a request to a known host finds its domain in one lookup, with no
// call of the key function. It holds at most limit hosts, and forgets them
// all when it is full. Lookups take no lock.
type hostDomains struct {
	m     readmap.Map[*domain] // URL host -> its domain
	n     atomic.Int64
	limit int64
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

// remember notes that host's requests go to d, which the caller has
// acquired, so that a sweep cannot have forgotten it.
func (h *hostDomains) remember(host string, d *domain) {
	if h.n.Add(1) > h.limit {
		h.m.DeleteFunc(func(string, *domain) bool { return true })
		h.n.Store(1)
	}
	// A clone: host is most often part of a whole URL, which would stay
	// in memory with it.
	if _, known := h.m.LoadOrStore(strings.Clone(host), d); known {
		h.n.Add(-1)
	}
}

// forget forgets the hosts of the domains a sweep forgot.
func (h *hostDomains) forget(forgotten map[*domain]bool) {
	h.m.DeleteFunc(func(_ string, d *domain) bool {
		if forgotten[d] {
			h.n.Add(-1)
			return true
		}
		return false
	})
}
