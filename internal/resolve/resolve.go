// Package resolve finds the server a host name stands for, through a
// bounded cache.
package resolve

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// LookupFunc returns the addresses of host, a host name without port or
// brackets.
type LookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// Lookup is the LookupFunc of the system's resolver.
func Lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// Cache remembers the server of each of at most max host names for ttl
// after its lookup; past max, it forgets expired names, then any. A
// lookup's failure is not remembered. Concurrent calls for one name share
// one lookup, which goes on when the call that started it is cancelled. A
// Cache is safe for concurrent use.
type Cache struct {
	lookup LookupFunc
	ttl    time.Duration
	max    int

	mu    sync.Mutex
	names map[string]*entry
}

// entry is one name's server, or the lookup that will find it.
type entry struct {
	done    chan struct{} // closed when the lookup ends
	server  string
	err     error
	expires time.Time
}

// New returns an empty Cache that looks names up with lookup.
func New(lookup LookupFunc, ttl time.Duration, max int) *Cache {
	return &Cache{lookup: lookup, ttl: ttl, max: max, names: make(map[string]*entry)}
}

// Server returns the key of the server host stands for: an IP address
// literal's own, or that of the first address host resolves to.
func (c *Cache) Server(ctx context.Context, host string) (string, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return Key(addr), nil
	}
	now := time.Now()
	c.mu.Lock()
	e, ok := c.names[host]
	if !ok || (isDone(e) && !now.Before(e.expires)) {
		e = &entry{done: make(chan struct{})}
		c.storeLocked(host, e, now)
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

// resolve looks host up for e, and forgets e if the lookup fails.
func (c *Cache) resolve(ctx context.Context, host string, e *entry) {
	addrs, err := c.lookup(ctx, host)
	switch {
	case err == nil && len(addrs) == 0:
		err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	case err == nil:
		e.server = Key(addrs[0])
	}
	if err != nil {
		e.err = fmt.Errorf("lookup %s: %w", host, err)
		c.mu.Lock()
		if c.names[host] == e {
			delete(c.names, host)
		}
		c.mu.Unlock()
	}
	e.expires = time.Now().Add(c.ttl)
	close(e.done)
}

// storeLocked notes e as host's entry, making room if the cache is full.
func (c *Cache) storeLocked(host string, e *entry, now time.Time) {
	if _, ok := c.names[host]; !ok && len(c.names) >= c.max {
		for name, old := range c.names {
			if isDone(old) && !now.Before(old.expires) {
				delete(c.names, name)
			}
		}
		for name := range c.names {
			if len(c.names) < c.max {
				break
			}
			delete(c.names, name)
		}
	}
	c.names[host] = e
}

func isDone(e *entry) bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
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
