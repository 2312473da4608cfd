package otelpolite

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/polite-go/polite/stats"
)

// otherDomain is the polite.domain of the points that sum the domains
// left out by WithMaxDomains.
const otherDomain = "other"

// counts are the counters of one domain, or of several summed.
type counts struct {
	total, delayed, canceled, failed int64
	serverDelayed, globalDelayed     int64
	robots, disallowed, givenUp      int64
	throttled, degraded              int64
	wait, paused, queued             time.Duration
	responses                        [6]int64
}

func countsOf(s stats.Snapshot) counts {
	return counts{
		total: s.TotalRequests, delayed: s.DelayedRequests, canceled: s.CanceledRequests,
		serverDelayed: s.ServerDelayedRequests, globalDelayed: s.GlobalDelayedRequests,
		failed: s.FailedRequests, robots: s.RobotsRequests, disallowed: s.DisallowedRequests, givenUp: s.GivenUpRequests,
		throttled: s.ThrottledResponses, degraded: s.DegradedRequests,
		wait: s.TotalWaitTime, paused: s.PausedTime, queued: s.QueuedTime, responses: s.Responses,
	}
}

func (a *counts) add(b counts) {
	a.total += b.total
	a.delayed += b.delayed
	a.serverDelayed += b.serverDelayed
	a.globalDelayed += b.globalDelayed
	a.canceled += b.canceled
	a.failed += b.failed
	a.robots += b.robots
	a.disallowed += b.disallowed
	a.givenUp += b.givenUp
	a.throttled += b.throttled
	a.degraded += b.degraded
	a.wait += b.wait
	a.paused += b.paused
	a.queued += b.queued
	for i := range a.responses {
		a.responses[i] += b.responses[i]
	}
}

// series is what one polite.domain reports.
type series struct {
	counts
	inFlight int64
	pausedBy map[string]int64 // by reason, the domains paused; nil when none is
}

func seriesOf(s stats.Snapshot, now time.Time) series {
	out := series{counts: countsOf(s), inFlight: s.InFlight}
	if s.PausedUntil.After(now) {
		out.pausedBy = map[string]int64{string(s.PauseReason): 1}
	}
	return out
}

// domainLabel is the polite.domain of domain. A custom polite.KeyFunc may
// return any bytes, and OpenTelemetry's string attributes are UTF-8: such
// a key is quoted, with its invalid bytes escaped, as the Prometheus
// collector labels it.
func domainLabel(domain string) string {
	if utf8.ValidString(domain) {
		return domain
	}
	return strconv.QuoteToASCII(domain)
}

// domainGroups decides which domains get points of their own under
// WithMaxDomains and sums the others into "other", as the Prometheus
// collector does. It is safe for concurrent use.
type domainGroups struct {
	maxDomains int

	mu      sync.Mutex
	chosen  map[string]bool   // domains with points of their own
	seen    map[string]counts // the last counts of each domain summed into "other"
	retired counts            // counts of domains that left "other"
}

// group turns the Transport's stats into the series to report, by
// polite.domain.
func (g *domainGroups) group(all map[string]stats.Snapshot, now time.Time) map[string]series {
	out := make(map[string]series, len(all))
	if g.maxDomains <= 0 {
		for domain, s := range all {
			out[domainLabel(domain)] = seriesOf(s, now)
		}
		return out
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.chooseLocked(all)
	seen := make(map[string]counts)
	other := series{counts: g.retired}
	for domain, s := range all {
		one := seriesOf(s, now)
		if g.chosen[domain] {
			out[domainLabel(domain)] = one
			continue
		}
		seen[domain] = one.counts
		other.add(one.counts)
		other.inFlight += one.inFlight
		for reason, n := range one.pausedBy {
			if other.pausedBy == nil {
				other.pausedBy = map[string]int64{}
			}
			other.pausedBy[reason] += n
		}
	}
	for domain, last := range g.seen {
		if _, still := seen[domain]; !still {
			g.retired.add(last)
			other.add(last)
		}
	}
	g.seen = seen
	if len(seen) > 0 || g.retired != (counts{}) {
		out[otherDomain] = other
	}
	return out
}

// chooseLocked keeps the chosen domains the Transport still tracks and
// fills the free places with the busiest of the others. g.mu is held.
func (g *domainGroups) chooseLocked(all map[string]stats.Snapshot) {
	if g.chosen == nil {
		g.chosen = make(map[string]bool)
	}
	for domain := range g.chosen {
		if _, ok := all[domain]; !ok {
			delete(g.chosen, domain)
		}
	}
	free := g.maxDomains - len(g.chosen)
	if free <= 0 {
		return
	}
	var candidates []stats.Snapshot
	for domain, s := range all {
		if !g.chosen[domain] && domain != otherDomain {
			candidates = append(candidates, s)
		}
	}
	slices.SortFunc(candidates, func(a, b stats.Snapshot) int {
		if n := cmp.Compare(b.TotalRequests, a.TotalRequests); n != 0 {
			return n
		}
		return cmp.Compare(a.Domain, b.Domain)
	})
	for _, s := range candidates[:min(free, len(candidates))] {
		g.chosen[s.Domain] = true
	}
}
