package polite

import (
	"context"
	"net/http"
	"time"

	"github.com/polite-go/polite/internal/feedback"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/stats"
)

// Stats returns a copy of domain's counters, and false if the Transport
// does not track domain. domain is keyed as a request would be: a host
// name (www.example.com) or URL answers for its key (example.com under
// DomainKey).
func (t *Transport) Stats(domain string) (stats.Snapshot, bool) {
	if !t.made() {
		return stats.Snapshot{}, false
	}
	d, ok := t.domains.Load(t.keyOf(domain))
	if !ok {
		return stats.Snapshot{}, false
	}
	return t.snapshot(d), true
}

// AllStats returns a copy of the counters of every tracked domain.
func (t *Transport) AllStats() map[string]stats.Snapshot {
	out := make(map[string]stats.Snapshot)
	if !t.made() {
		return out
	}
	for _, d := range t.domains.All() {
		out[d.key] = t.snapshot(d)
	}
	return out
}

// RemainingWait returns how long a request to domain sent now would wait,
// in its domain and in the global scope (see WithGlobalLimit), consuming
// nothing; 0 for a domain never seen. domain is keyed as in Stats.
// RequestWait also counts the server's scope.
func (t *Transport) RemainingWait(domain string) time.Duration {
	if !t.made() {
		return 0
	}
	return t.domainWait(domain, nil)
}

// RequestWait returns how long req sent now would wait for its turn in
// every scope it passes (its domain, its server, the global one),
// consuming nothing; 0 for a request the Transport cannot key.
func (t *Transport) RequestWait(req *http.Request) time.Duration {
	key, err := t.Key(req)
	if err != nil {
		return 0
	}
	return t.domainWait(key, req)
}

// domainWait is how long a request to domain sent now would wait, in its
// domain and in the scopes it passes: the server's too if req, a request
// to domain, is given.
func (t *Transport) domainWait(domain string, req *http.Request) time.Duration {
	key := t.keyOf(domain)
	d, ok := t.domains.Load(key)
	if !ok {
		// Never seen, or forgotten by the table while the limiter may
		// still pace it: ask the limiter under the limit it would get.
		d = t.newDomain(key)
	}
	wait := time.Duration(0)
	lim := t.currentLimit(d)
	if !d.unpaced(lim) {
		wait = t.stateWait(d.request(lim))
	}
	if !d.has(flagExempt) {
		wait = max(wait, t.scopesWait(req))
	}
	return wait
}

func (t *Transport) snapshot(d *domain) stats.Snapshot {
	s := d.stats.Snapshot(d.key)
	s.GivenUp = d.has(flagGivenUp)
	lim := d.inForce.Load()
	if d.unpaced(lim) {
		return s
	}
	st, err := t.limiter.State(context.Background(), d.request(lim))
	if err != nil {
		return s
	}
	now := time.Now()
	switch {
	case st.Paused > 0:
		s.PausedUntil, s.PauseReason = now.Add(st.Paused), st.PauseReason
	case st.Wait > 0 && (st.Reason == feedback.CrawlDelay || st.Reason == feedback.Adaptive):
		s.PausedUntil, s.PauseReason = now.Add(st.Wait), st.Reason
	}
	s.Quotas = st.Quotas
	return s
}

// scopesWait is how long a request sent now would wait in the global
// scope and, if req is given, in its server's.
func (t *Transport) scopesWait(req *http.Request) time.Duration {
	ls := t.limits.Load()
	wait := time.Duration(0)
	if ls.global != nil {
		wait = t.stateWait(t.scopes.Global().Request(&ls.global.rule))
	}
	if ls.server == nil || req == nil || req.URL == nil || req.URL.Host == "" {
		return wait
	}
	s := t.scopes.PeekServer(req.Context(), req.URL.Hostname())
	return max(wait, t.stateWait(s.Request(&ls.server.rule)))
}

// stateWait is how long request r would wait now; 0 if the limiter
// cannot say.
func (t *Transport) stateWait(r limiter.Request) time.Duration {
	st, err := t.limiter.State(context.Background(), r)
	if err != nil {
		return 0
	}
	return st.Wait
}
