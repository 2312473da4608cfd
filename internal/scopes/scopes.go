// Package scopes keeps the scopes that requests of many domains share: the
// servers' and the global one.
package scopes

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/internal/counters"
	"github.com/polite-go/polite/internal/lru"
	"github.com/polite-go/polite/internal/places"
	"github.com/polite-go/polite/internal/resolve"
	"github.com/polite-go/polite/limiter"
)

// The scopes a request passes, as stats and logs name them: its domain's,
// and besides it the servers' and the global one.
const (
	Domain = "domain"
	Server = "server"
	Global = "global"
)

// The limiter keys of the global scope and of the servers. polite's
// DomainKey and HostKey never make such a key: a host name has no
// parentheses, and no colon unless it is an IPv6 address.
const (
	globalKey     = "(global)"
	serverPrefix  = "ip:"
	unknownServer = "(unknown)" // the server of hosts that never resolved
)

// serverTTL is how long a host's server is remembered, which polite's
// WithLookup states.
const serverTTL = time.Minute

// Scope is a key that requests of many domains share: one server, or all.
type Scope struct {
	Name    string // Server or Global
	Key     string // its limiter key
	places  places.Pool
	claimed atomic.Int64     // requests between acquiring and releasing it
	last    counters.Instant // when the latest request through it was sent
}

// Request returns a Request to the limiter for s under rule, with no
// MaxWait.
func (s *Scope) Request(rule *limiter.Rule) limiter.Request {
	return limiter.Request{Key: s.Key, Rule: rule, LastStart: s.last.Load()}
}

// Table holds the server scopes, at most max of them, and the global
// scope. It is safe for concurrent use.
type Table struct {
	global   *Scope
	unknown  *Scope // the servers' scope of hosts that never resolved
	resolver *resolve.Cache

	mu      sync.Mutex
	servers lru.List[string, *Scope] // by the server's address or /64
	max     int

	// waiter is the scope that last made a request wait, whose turn a
	// request claims first, so that it seldom claims turns it must give
	// back.
	waiter atomic.Pointer[string]
}

// New returns a Table that finds a host's server through lookup
// (resolve.Lookup if nil), remembering the servers of at most max hosts,
// and at most max servers.
func New(lookup resolve.LookupFunc, max int) *Table {
	if lookup == nil {
		lookup = resolve.Lookup
	}
	return &Table{
		global:   &Scope{Name: Global, Key: globalKey},
		unknown:  &Scope{Name: Server, Key: serverPrefix + unknownServer},
		resolver: resolve.New(lookup, serverTTL, max),
		max:      max,
	}
}

// AcquireGlobal returns the global scope, claimed. The caller releases it.
func (tb *Table) AcquireGlobal() *Scope {
	tb.global.claimed.Add(1)
	return tb.global
}

// Global returns the global scope, without claiming it.
func (tb *Table) Global() *Scope { return tb.global }

// AcquireServer returns the scope of host's server, claimed: the one that
// hosts which never resolved share if its lookup fails and it never
// resolved before. The caller releases it.
func (tb *Table) AcquireServer(ctx context.Context, host string) *Scope {
	server, err := tb.resolver.Server(ctx, host)
	if err != nil {
		tb.unknown.claimed.Add(1)
		return tb.unknown
	}
	return tb.acquireServer(server)
}

// acquireServer returns the scope of server, claimed. Past max servers,
// it forgets the least recently used that no request claims; their pace
// stays in the limiter. A scope it makes starts with the latest request
// of the hosts that never resolved as its own, which may have gone to
// its server.
func (tb *Table) acquireServer(server string) *Scope {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	e := tb.servers.Get(server)
	if e != nil {
		e.Value.claimed.Add(1)
		return e.Value
	}
	s := tb.newServer(server)
	s.claimed.Add(1)
	tb.servers.Add(server).Value = s
	tb.servers.Trim(tb.max, 2, func(e *lru.Entry[string, *Scope]) bool { return e.Value.claimed.Load() == 0 })
	return s
}

// PeekServer returns the scope of host's server as AcquireServer would,
// without claiming it, nor adding it to the table if the table holds
// none.
func (tb *Table) PeekServer(ctx context.Context, host string) *Scope {
	server, err := tb.resolver.Server(ctx, host)
	if err != nil {
		return tb.unknown
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if e := tb.servers.Peek(server); e != nil {
		return e.Value
	}
	return tb.newServer(server)
}

// newServer returns a new scope of server, which starts with the latest
// request of the hosts that never resolved as its own.
func (tb *Table) newServer(server string) *Scope {
	s := &Scope{Name: Server, Key: serverPrefix + server}
	if last := tb.unknown.last.Load(); !last.IsZero() {
		s.last.Store(last)
	}
	return s
}

// Order puts first the turn of the scope that last made a request wait:
// reqs, the names of their scopes and their claims are a request's
// turns, in step.
func (tb *Table) Order(reqs []limiter.Request, names []string, claims []int) {
	w := tb.waiter.Load()
	if w == nil {
		return
	}
	for i := range names {
		if names[i] == *w {
			reqs[0], reqs[i] = reqs[i], reqs[0]
			names[0], names[i] = names[i], names[0]
			claims[0], claims[i] = claims[i], claims[0]
			return
		}
	}
}

// WaitedFor notes that the scope named name made a request wait.
func (tb *Table) WaitedFor(name string) {
	if w := tb.waiter.Load(); w == nil || *w != name {
		tb.waiter.Store(&name)
	}
}
