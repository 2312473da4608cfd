package main

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"
)

// status is the progress display's line: the time left and the domains
// requests wait for.
func (c *crawl) status() string {
	return fmt.Sprintf("eta %s, %s", formatETA(c.eta.get(c.estimate)), waitLine(c.waiting()))
}

// etaCache keeps the crawl's estimate of the time left for a second, or
// until it has run out: each estimate asks the Transport about the
// busiest domains.
type etaCache struct {
	mu   sync.Mutex
	at   time.Time
	left time.Duration
}

// etaEvery is how long an estimate of the time left stands.
const etaEvery = time.Second

func (e *etaCache) get(estimate func() time.Duration) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if now := time.Now(); now.Sub(e.at) >= etaEvery || e.left <= now.Sub(e.at) {
		e.at, e.left = now, estimate()
	}
	return max(e.left-time.Since(e.at), 0)
}

// estimate is the time left: the longest of the domains' own, each the
// wait for its next turn (a pause included) plus one interval of its pace
// per queued URL after the first; for a domain whose server is failing,
// at least the time until it is given up (see untilGivenUp). The
// Transport is asked the wait of the maxRecent domains with the most URLs
// queued (with Redis, a round trip each); the others count from now.
func (c *crawl) estimate() time.Duration {
	type pending struct {
		key string
		n   int
	}
	c.mu.Lock()
	all := make([]pending, 0, len(c.queued))
	for key, q := range c.queued {
		all = append(all, pending{key, len(q)})
	}
	c.mu.Unlock()
	slices.SortFunc(all, func(a, b pending) int { return cmp.Compare(b.n, a.n) })
	var left time.Duration
	for i, p := range all {
		var wait time.Duration
		if i < maxRecent {
			wait = c.transport.RemainingWait(p.key)
		}
		left = max(left, wait+time.Duration(p.n-1)*c.interval(p.key))
		if failing := c.figures.get(p.key).failing; failing > 0 && c.maxErrors > 0 {
			left = max(left, wait+c.untilGivenUp(failing))
		}
	}
	return left
}

// untilGivenUp is how long a domain whose server has failed failing
// answers in a row takes to be given up, from its next answer, if the
// server keeps failing: the backoff after each answer to come, 1 s
// doubling with each failure (at most -max-pause), until the
// -max-errors-th.
func (c *crawl) untilGivenUp(failing int) time.Duration {
	var total time.Duration
	for k := failing + 1; k < c.maxErrors; k++ {
		pause := time.Duration(1<<min(k-1, 40)) * time.Second
		if c.maxPause > 0 {
			pause = min(pause, c.maxPause)
		}
		total += pause
	}
	return total
}

// interval is the least gap between two requests to key under its limit.
func (c *crawl) interval(key string) time.Duration {
	l := c.transport.Limit(key)
	if l.Disabled {
		return 0
	}
	var gap time.Duration
	if l.RequestsPerSecond > 0 {
		gap = time.Duration(float64(time.Second) / l.RequestsPerSecond)
	}
	return max(gap, l.MinDelay)
}

// formatETA writes a time left to the second, as 1m48s.
func formatETA(d time.Duration) string {
	return d.Round(time.Second).String()
}

// domainWait is how long a request to one domain would wait now.
type domainWait struct {
	key    string
	wait   time.Duration
	paused string // why the domain is paused, if it is
}

// waiting lists the domains most recently handed out that have targets
// left and that a request would wait for now, longest wait first.
func (c *crawl) waiting() []domainWait {
	var out []domainWait
	for _, key := range c.recent.list() {
		if w := c.transport.RemainingWait(key); w > 0 {
			out = append(out, domainWait{key: key, wait: w})
		}
	}
	slices.SortFunc(out, func(a, b domainWait) int {
		if n := cmp.Compare(b.wait, a.wait); n != 0 {
			return n
		}
		return cmp.Compare(a.key, b.key)
	})
	if len(out) > 0 {
		if s, ok := c.transport.Stats(out[0].key); ok && s.PausedUntil.After(time.Now()) {
			out[0].paused = cmp.Or(string(s.PauseReason), "paused")
		}
	}
	return out
}

// maxRecent is how many domains the display of waits asks about: the
// Transport's answer may be a round trip to Redis.
const maxRecent = 16

// recentKeys remembers the domains most recently handed out that still
// have targets left. It is safe for concurrent use.
type recentKeys struct {
	mu   sync.Mutex
	left map[string]int // targets not done, by key
	keys []string       // most recent first, at most maxRecent
}

// add notes a target of key to fetch.
func (r *recentKeys) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left == nil {
		r.left = make(map[string]int)
	}
	r.left[key]++
}

// taken notes that a target of key was handed out.
func (r *recentKeys) taken(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.keys, key); i >= 0 {
		r.keys = slices.Delete(r.keys, i, i+1)
	}
	r.keys = slices.Insert(r.keys, 0, key)
	if len(r.keys) > maxRecent {
		r.keys = r.keys[:maxRecent]
	}
}

// done notes that a target of key is finished.
func (r *recentKeys) done(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left[key]--; r.left[key] <= 0 {
		delete(r.left, key)
	}
}

// list returns the recent keys with targets left.
func (r *recentKeys) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, key := range r.keys {
		if r.left[key] > 0 {
			out = append(out, key)
		}
	}
	return out
}
