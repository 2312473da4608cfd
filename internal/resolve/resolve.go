// Package resolve finds the server a host name stands for, through a
// bounded cache.
package resolve

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/polite-go/polite/internal/lru"
)

// LookupFunc returns the addresses of host, a host name without port or
// brackets.
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// Lookup is the LookupFunc of the system's resolver.
func Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// Cache remembers the server of each of at most max host names, the most
// recently used, for ttl after its lookup. A lookup's failure is not
// remembered: a name that resolved before keeps its last known server,
// and is looked up again at the next call; a name that never resolved is
// an error. Concurrent calls for one name share one lookup, which goes on
// when the call that started it is cancelled. A Cache is safe for
// concurrent use.
type Cache struct {
	lookup LookupFunc
	ttl    time.Duration
	max    int

	mu    sync.Mutex
	names lru.List[string, *entry]
}

// entry is one name's server, or the lookup that will find it.
type entry struct {
	done    chan struct{} // closed when the lookup ends
	server  string
	err     error
	expires time.Time
	last    string // the server an earlier lookup found; empty if none
}

// New returns an empty Cache that looks names up with lookup.
func New(lookup LookupFunc, ttl time.Duration, max int) *Cache {
	return &Cache{lookup: lookup, ttl: ttl, max: max}
}

// Server returns the key of the server host stands for: an IP address
// literal's own, or that of the addresses host resolves to (see
// ServerKey).
func (c *Cache) Server(ctx context.Context, host string) (string, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return Key(addr), nil
	}
	now := time.Now()
	c.mu.Lock()
	var e *entry
	known := c.names.Get(host)
	if known != nil {
		e = known.Value
	}
	if e == nil || (isDone(e) && !now.Before(e.expires)) {
		last := ""
		if e != nil {
			last = e.server
		}
		e = &entry{done: make(chan struct{}), last: last}
		if known == nil {
			known = c.names.Add(strings.Clone(host))
			c.names.Trim(c.max, 1, func(*lru.Entry[string, *entry]) bool { return true })
		}
		known.Value = e
		c.mu.Unlock()
		go c.resolve(context.WithoutCancel(ctx), host, e)
	} else {
		c.mu.Unlock()
	}
	select {
	case <-e.done:
		return e.server, e.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// resolve looks host up for e. If the lookup fails, e keeps the last
// known server, to be looked up again at the next call, or is forgotten.
func (c *Cache) resolve(ctx context.Context, host string, e *entry) {
	addrs, err := c.lookup(ctx, host)
	switch {
	case err == nil && len(addrs) == 0:
		err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	case err == nil:
		e.server = ServerKey(addrs)
	}
	if err != nil && e.last != "" {
		e.server = e.last
		close(e.done) // expired at once: looked up again at the next call
		return
	}
	if err != nil {
		e.err = fmt.Errorf("lookup %s: %w", host, err)
		c.mu.Lock()
		if known := c.names.Peek(host); known != nil && known.Value == e {
			c.names.Remove(known)
		}
		c.mu.Unlock()
	}
	e.expires = time.Now().Add(c.ttl)
	close(e.done)
}

func isDone(e *entry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// ServerKey names the server at addrs, a host's addresses, the same
// whatever their order and whichever of its families a name lists: the
// smallest IPv4 address, or, with none, the smallest IPv6 address's /64
// (see Key). addrs is not empty.
func ServerKey(addrs []netip.Addr) string {
	least := addrs[0].Unmap()
	for _, a := range addrs[1:] {
		a = a.Unmap()
		if a.Is4() != least.Is4() {
			if a.Is4() {
				least = a
			}
			continue
		}
		if a.Less(least) {
			least = a
		}
	}
	return Key(least)
}

// Key names the server at addr: an IPv4 address as it is, an IPv6 address
// by its /64, which is usually one site's.
func Key(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	if addr.Is4() {
		return addr.String()
	}
	prefix, _ := addr.Prefix(64)
	return prefix.String()
}
