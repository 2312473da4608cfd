package polite

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/counters"
	"github.com/polite-go/polite/internal/lru"
	"github.com/polite-go/polite/internal/places"
	"github.com/polite-go/polite/internal/resolve"
	"github.com/polite-go/polite/limiter"
)

// WithServerLimit paces every request also by the server it goes to, so
// that the domains one server hosts share l, as Nutch's byIP queues and
// Scrapy's CONCURRENT_REQUESTS_PER_IP do. A server is named by the
// addresses its host resolves to (through WithLookup), whatever their
// order and families: the smallest IPv4 address, or, with none, the /64
// of the smallest IPv6 address. A host whose lookup fails keeps the server
// it last resolved to; one that never resolved is paced under one key
// that every such host shares, under l, and a server first seen after
// them keeps its gap from the latest of them: a request is never sent
// unpaced because its lookup failed, though the base may resolve the name
// where the lookup did not.
// Every rule of l applies, max_concurrent in this process; l takes
// nothing from the default, so config.Limit{MaxConcurrent: 8} caps the
// requests in flight to a server and sets no pace.
//
// Do not use it when requests go through a proxy, which reaches the
// servers for you, nor for sites behind a CDN, whose many sites share
// addresses that do not stand for one server.
func WithServerLimit(l config.Limit) Option {
	return func(o *options) { o.serverLimit = &l }
}

// WithGlobalLimit paces every request also by one key that all domains
// share, as Scrapy's CONCURRENT_REQUESTS caps a whole crawl, or a proxy's
// or an uplink's limit would: every rule of l applies, max_concurrent in
// this process; l takes nothing from the default.
func WithGlobalLimit(l config.Limit) Option {
	return func(o *options) { o.globalLimit = &l }
}

// WithLookup sets how WithServerLimit finds the addresses of a host;
// net.DefaultResolver's LookupNetIP by default. A host's server is
// remembered for a minute after its lookup, for at most WithMaxDomains
// hosts; a failed lookup is not remembered.
func WithLookup(lookup func(ctx context.Context, host string) ([]netip.Addr, error)) Option {
	return func(o *options) { o.lookup = lookup }
}

// serverTTL is how long a host's server is remembered, which WithLookup's
// doc states.
const serverTTL = time.Minute

// The scopes a request passes besides its domain, as stats and logs name
// them, and the limiter keys of the global scope and of the servers.
// DomainKey and HostKey never make such a key: a host name has no
// parentheses, and no colon unless it is an IPv6 address.
const (
	scopeDomain = "domain"
	scopeServer = "server"
	scopeGlobal = "global"

	globalKey     = "(global)"
	serverPrefix  = "ip:"
	unknownServer = "(unknown)" // the server of hosts that never resolved
)

// scope is a key that requests of many domains share: one server, or all.
type scope struct {
	name    string // scopeServer or scopeGlobal
	key     string
	inForce atomic.Pointer[limitInForce]
	places  places.Pool
	held    atomic.Int64     // requests between acquiring and releasing it
	last    counters.Instant // when the latest request through it was sent
}

// request is a Request to the limiter for s under rule, with no MaxWait.
func (s *scope) request(rule *limiter.Rule) limiter.Request {
	return limiter.Request{Key: s.key, Rule: rule, LastStart: s.last.Load()}
}

// hold is a request's claim on a scope, under the limit in force it started with.
type hold struct {
	s *scope
	p *limitInForce
}

// scopes holds the server and global scopes of a Transport; the limits
// in force say which apply.
type scopes struct {
	global   *scope
	unknown  *scope // the servers' scope of hosts that never resolved
	resolver *resolve.Cache

	mu      sync.Mutex
	servers lru.List[string, *scope] // by the server's address or /64
	max     int

	// waiter is the scope that last made a request wait, whose turn a
	// request claims first, so that it seldom claims turns it must give
	// back.
	waiter atomic.Pointer[string]
}

func newScopes(o *options) *scopes {
	lookup := o.lookup
	if lookup == nil {
		lookup = resolve.Lookup
	}
	return &scopes{
		global:   &scope{name: scopeGlobal, key: globalKey},
		unknown:  &scope{name: scopeServer, key: serverPrefix + unknownServer},
		resolver: resolve.New(lookup, serverTTL, o.maxDomains),
		max:      o.maxDomains,
	}
}

// order puts first the turn of the scope that last made a request wait:
// reqs, their scopes and holds are a request's turns, in step.
func (sc *scopes) order(reqs []limiter.Request, scopes []string, holds []int) {
	w := sc.waiter.Load()
	if w == nil {
		return
	}
	for i := range scopes {
		if scopes[i] == *w {
			reqs[0], reqs[i] = reqs[i], reqs[0]
			scopes[0], scopes[i] = scopes[i], scopes[0]
			holds[0], holds[i] = holds[i], holds[0]
			return
		}
	}
}

// waitedFor notes that scope made a request wait.
func (sc *scopes) waitedFor(scope string) {
	if w := sc.waiter.Load(); w == nil || *w != scope {
		sc.waiter.Store(&scope)
	}
}

// acquireScopes returns the scopes req passes besides its domain under
// ls, each claimed for it: its server's and the global one. The caller
// releases them.
func (t *Transport) acquireScopes(req *http.Request, ls *limitSet) claims {
	var held claims
	sc := t.scopes
	if ls.server != nil && req.URL != nil && req.URL.Host != "" {
		s := sc.unknown
		if server, err := sc.resolver.Server(req.Context(), req.URL.Hostname()); err == nil {
			s = sc.acquireServer(server)
		} else {
			s.held.Add(1)
		}
		held = append(held, hold{s, t.currentLimit(&s.inForce, scopeServer, s.key)})
	}
	if ls.global != nil {
		sc.global.held.Add(1)
		held = append(held, hold{sc.global, t.currentLimit(&sc.global.inForce, scopeGlobal, globalKey)})
	}
	return held
}

// acquireServer returns the scope of server, claimed. Past max servers,
// it forgets the least recently used that no request holds; their pace
// stays in the limiter. A scope it makes starts with the latest request
// of the hosts that never resolved as its own, which may have gone to
// its server.
func (sc *scopes) acquireServer(server string) *scope {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	e := sc.servers.Get(server)
	if e != nil {
		e.Value.held.Add(1)
		return e.Value
	}
	s := &scope{name: scopeServer, key: serverPrefix + server}
	if last := sc.unknown.last.Load(); !last.IsZero() {
		s.last.Store(last)
	}
	s.held.Add(1)
	sc.servers.Add(server).Value = s
	sc.servers.Trim(sc.max, 2, func(e *lru.Entry[string, *scope]) bool { return e.Value.held.Load() == 0 })
	return s
}

// claims are a request's claims on the scopes it passes besides its
// domain, in order: its server's, then the global one.
type claims []hold

// takeSlots takes a place under each scope's MaxConcurrent, in order. If
// ctx ends first, it gives back those it took.
func (c claims) takeSlots(ctx context.Context) error {
	for i, h := range c {
		if err := h.s.places.Take(ctx, h.p.maxConcurrent); err != nil {
			c[:i].giveSlots()
			return fmt.Errorf("%s scope: %w", h.s.name, err)
		}
	}
	return nil
}

// giveSlots gives back the places takeSlots took.
func (c claims) giveSlots() {
	for _, h := range c {
		h.s.places.Give()
	}
}

// sent notes that a request holding the claims was sent at at.
func (c claims) sent(at time.Time) {
	for _, h := range c {
		h.s.last.Store(at)
	}
}

// release ends the claims.
func (c claims) release() {
	for _, h := range c {
		h.s.held.Add(-1)
	}
}

// end ends the flight of a request that took its slots.
func (c claims) end() {
	c.giveSlots()
	c.release()
}

// server returns the scope of server as the table holds it, without
// claiming it, or one as acquireServer would make it if the table holds
// none.
func (sc *scopes) server(server string) *scope {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if e := sc.servers.Peek(server); e != nil {
		return e.Value
	}
	s := &scope{name: scopeServer, key: serverPrefix + server}
	if last := sc.unknown.last.Load(); !last.IsZero() {
		s.last.Store(last)
	}
	return s
}

// ServerLimit returns the limit of the servers' scope in force, and false
// if there is none (see WithServerLimit).
func (t *Transport) ServerLimit() (config.Limit, bool) {
	if !t.made() {
		return config.Limit{}, false
	}
	if l := t.limits.Load().server; l != nil {
		return *l, true
	}
	return config.Limit{}, false
}

// GlobalLimit returns the limit of the global scope in force, and false if
// there is none (see WithGlobalLimit).
func (t *Transport) GlobalLimit() (config.Limit, bool) {
	if !t.made() {
		return config.Limit{}, false
	}
	if l := t.limits.Load().global; l != nil {
		return *l, true
	}
	return config.Limit{}, false
}
