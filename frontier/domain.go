package frontier

import (
	"net/http"
	"time"

	"github.com/polite-go/polite/config"
)

// place is where a domain is filed.
type place int8

const (
	nowhere      place = iota // nothing pending
	inReady                   // in Frontier.ready
	inOver                    // in Frontier.over: set aside at or over the fair share
	parked                    // at its MaxConcurrent, until a flight ends
	beingChecked              // out of both heaps while Next asks its wait
)

// domain is one domain's pending requests and what the Frontier knows of
// its turns.
type domain struct {
	key      string
	queue    fifo
	inFlight int // requests handed out whose flight has not ended
	where    place
	index    int    // in its heap
	seq      uint64 // when it entered ready, for ties

	// readyAt is when its next turn comes: asked of the Transport if
	// checked, else estimated from its limit after the last hand-out.
	readyAt   time.Time
	checked   bool
	checkedAt uint64 // Frontier.handOuts when it was checked

	// The limit's pace, as a GCRA: a request may go at t if t >= tat -
	// tolerance, and then moves tat to max(tat, t) + interval.
	tat       time.Time
	interval  time.Duration // 1/rate; 0 without a bucket
	tolerance time.Duration // (burst-1) * interval
	minDelay  time.Duration
	unpaced   bool

	maxConcurrent int // 0: no cap

	givenUp   bool      // the Transport gave it up: hand its requests out at once
	notBefore time.Time // no turn before it (a robots.txt to fetch again)
}

// entry is a request in a domain's line.
type entry struct {
	req     *http.Request
	attempt int           // 1 for the first
	pushed  time.Duration // when it was queued, since the Frontier's epoch
}

// giveUp notes that the Transport gave d up: its requests go at once, to
// be refused.
func (d *domain) giveUp(now time.Time) {
	d.givenUp = true
	d.readyAt = now
}

// holdUntil makes d's next turn come no sooner than t, and reports
// whether that moved it.
func (d *domain) holdUntil(t time.Time) bool {
	if !t.After(d.notBefore) {
		return false
	}
	d.notBefore = t
	if !t.After(d.readyAt) {
		return false
	}
	d.readyAt = t
	return true
}

// sameEstimate reports whether newDomain makes the same estimate under
// limits a and b: whether they agree on what it reads.
func sameEstimate(a, b config.Limit) bool {
	return a.RequestsPerSecond == b.RequestsPerSecond && a.Burst == b.Burst && a.MinDelay == b.MinDelay &&
		a.Disabled == b.Disabled && a.MaxConcurrent == b.MaxConcurrent
}

func newDomain(key string, l config.Limit, now time.Time) *domain {
	d := &domain{key: key, readyAt: now, minDelay: l.MinDelay, unpaced: l.Disabled, maxConcurrent: l.MaxConcurrent}
	if l.RequestsPerSecond > 0 {
		d.interval = time.Duration(float64(time.Second) / l.RequestsPerSecond)
		d.tolerance = time.Duration(max(l.Burst-1, 0)) * d.interval
	}
	return d
}

// advance estimates d's next turn after a request was handed out at now.
// The estimate leaves out what the limit alone does not say (jitter,
// quotas, pauses, other processes sharing the limiter): the Transport is
// asked before the next hand-out.
func (d *domain) advance(now time.Time) {
	d.checked = false
	next := now
	if !d.unpaced {
		if d.interval > 0 {
			d.tat = later(d.tat, now).Add(d.interval)
			next = d.tat.Add(-d.tolerance)
		}
		next = later(next, now.Add(d.minDelay))
	}
	d.readyAt = later(later(next, now), d.notBefore) // with burst left: behind the domains ready before now
	if d.givenUp {
		d.readyAt = now
	}
}

// setChecked files the Transport's answer, at now, that a request to d
// would wait wait.
func (d *domain) setChecked(now time.Time, wait time.Duration) {
	d.checked = true
	if wait > 0 || d.notBefore.After(now) {
		d.readyAt = later(now.Add(wait), d.notBefore)
		return
	}
	if d.readyAt.After(now) {
		d.readyAt = now
	}
	if d.interval > 0 && d.tat.Add(-d.tolerance).After(now) {
		d.tat = now.Add(d.tolerance) // a turn is free now: at least one
	}
}

// mayCheck reports whether the Transport's answer for d is worth asking
// at now: d's estimate is not checked, and either its turn is estimated
// to have come, or no request to d is in flight. While one is, the
// Transport may not have reserved its turn yet and would answer too soon
// (a request waits its turn inside RoundTrip, after a robots.txt fetch if
// it is the domain's first); so the estimate stands until it comes.
func (d *domain) mayCheck(now time.Time) bool {
	return !d.checked && (d.inFlight == 0 || !d.readyAt.After(now))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// fifo is a queue of entries. Memory: an entry (24 bytes) per request
// queued, in a slice whose capacity stays within four times their number,
// plus 64. Each resize copies the entries queued, at most once per half as
// many pushes or pops, so that push and pop cost O(1) amortised.
type fifo struct {
	items []entry // items[head:] are queued
	head  int
}

func (q *fifo) len() int { return len(q.items) - q.head }

func (q *fifo) push(r entry) {
	if len(q.items) == cap(q.items) {
		q.resize()
	}
	q.items = append(q.items, r)
}

func (q *fifo) pop() entry {
	r := q.items[q.head]
	q.items[q.head] = entry{}
	q.head++
	switch n := q.len(); {
	case n == 0:
		q.items, q.head = q.items[:0], 0
		if cap(q.items) > 64 {
			q.items = nil
		}
	case cap(q.items) > 4*n+64:
		q.resize()
	}
	return r
}

// resize moves the queued requests to a new slice with room for as many
// again.
func (q *fifo) resize() {
	n := q.len()
	q.items = append(make([]entry, 0, 2*n+8), q.items[q.head:]...)
	q.head = 0
}

// heap is a binary min-heap of domains under less; each domain keeps its
// index, so that it can be fixed or removed in O(log n).
type heap struct {
	items []*domain
	less  func(a, b *domain) bool
}

func (h *heap) len() int { return len(h.items) }

func (h *heap) push(d *domain) {
	d.index = len(h.items)
	h.items = append(h.items, d)
	h.up(d.index)
}

func (h *heap) pop() *domain {
	d := h.items[0]
	h.remove(d)
	return d
}

func (h *heap) remove(d *domain) {
	i, last := d.index, len(h.items)-1
	if i != last {
		h.swap(i, last)
	}
	h.items[last] = nil
	h.items = h.items[:last]
	if i != last {
		h.fixAt(i)
	}
	d.index = -1
}

func (h *heap) fix(d *domain) { h.fixAt(d.index) }

func (h *heap) fixAt(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *heap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index = i
	h.items[j].index = j
}

func (h *heap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

// down moves the item at i down as far as it goes, and reports whether it
// moved.
func (h *heap) down(i int) bool {
	start, n := i, len(h.items)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && h.less(h.items[right], h.items[child]) {
			child = right
		}
		if !h.less(h.items[child], h.items[i]) {
			break
		}
		h.swap(i, child)
		i = child
	}
	return i > start
}
