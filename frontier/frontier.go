// Package frontier hands a worker pool's requests out in the order their
// domains' turns come under a polite.Transport.
package frontier

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/ticket"
)

// Frontier holds the requests a pool of workers is to send through a
// [polite.Transport], and hands each free worker the one whose domain can
// go soonest, so that no worker sleeps in RoundTrip behind one domain
// while another domain's turn has come. The usual worker pool changes by
// three lines: New instead of make, Push instead of a send, Next instead
// of a receive (see the example). Requests of one domain go in the order
// they were pushed.
//
// Next asks the Transport it serves when turns come, so nothing is paced
// twice and the Transport stays the one that enforces: after handing a
// domain's request out it estimates the domain's next turn from its
// limit ([polite.Transport.Limit]), and before handing out the next one it asks
// [polite.Transport.RequestWait] of that request once, without holding its
// lock (with a Redis limiter that is a round trip per scope), which covers
// what the limit alone does not say: jitter, quotas, a server's pause,
// another process sharing the limiter, and the server and global scopes
// (polite.WithServerLimit, polite.WithGlobalLimit) that the domain shares
// with others. With such scopes in force, a request handed out changes
// the answer for other domains, so Next asks anew after each hand-out,
// does not ask while a request handed out does not hold its turns yet,
// and spaces hand-outs by the global limit. While a request to the domain
// is in flight it does not ask before the estimate comes, since the
// Transport may not have seen that request yet; so a domain the Transport does not pace
// (polite.WithLoopbackExempt) is paced by its limit while one of its
// requests is in flight. When a flight ends it asks again before the next
// hand-out, since the response may have paused the domain.
//
// Next never hands a domain more requests at once than its MaxConcurrent,
// nor more than a fair share of the workers while other domains have
// requests left: the share is ceil(W/R), at least 1, where W is the
// workers active now (requests handed out whose flight has not ended, and
// Next calls under way) and R the domains with requests left that
// MaxConcurrent does not hold back. A domain whose responses hang thus
// occupies at most its share, and the others keep going. The share holds even
// when the other domains' turns are a while off: a worker then waits in
// Next for them rather than join the slow domain, which can leave a fast
// domain with fewer workers than it could use.
//
// Every request Next returns (a shallow copy of the one pushed, its
// context carrying a ticket) must be sent through the Transport, by an
// http.Client over it or directly, or have its context cancelled: its
// domain counts it as one of its workers until its flight ends, that is
// until the Transport refuses it, the send fails, the response body is
// closed, or its context is done. Redirects and retries of a request count
// only until the first flight ends.
//
// A crawler's basics come with it. Push drops a request whose URL was
// pushed before (see KeepDuplicates). With WithRetries, a worker reports
// each answer to Done, which puts a request asked to come back (a 429, a
// 503, a transport failure: see Retryable) back in line for its domain's
// next turn; Wait returns once every request pushed has a final answer,
// which is when to Close. The requests of a domain the Transport gave up
// (polite.WithMaxErrors) are handed out at once, for the Transport to
// refuse. The time each request waited in line is counted in its domain's
// stats (stats.Snapshot.QueuedTime) when it reaches the Transport.
//
// Memory: a pending request costs the Frontier a 24-byte entry in its
// domain's queue (with at most four times that in slack), a domain with
// requests pending or in flight about 250 bytes and its name, and a
// domain with neither nothing; unless KeepDuplicates, every URL pushed is
// remembered as a 64-bit hash, about 40 bytes in its map. Next costs O(log D) for D domains with requests
// pending, and at most O(W) more when the fair share changes; it never
// scans the domains.
//
// A Frontier is safe for concurrent use: any goroutine may Push while
// others call Next.
type Frontier struct {
	t *polite.Transport

	mu          sync.Mutex
	domains     map[string]*domain // with requests pending or in flight
	ready       heap               // pending, under MaxConcurrent: by readyAt
	over        heap               // pending, set aside at or over the share: by inFlight
	checking    int                // domains out of both heaps while Next asks their wait
	pending     int                // requests pushed and not handed out
	inFlight    int                // requests handed out whose flight has not ended
	nexting     int                // Next calls under way
	waiting     []*waiter          // Next calls blocked, in arrival order
	timer       *waiter            // the waiter timing the soonest turn, if any
	timerAt     time.Time          // when that turn comes
	seq         uint64             // order of entry into ready, for ties
	global      *domain            // the estimate of the global scope's turns; nil before the first Next
	globalLimit config.Limit       // the limit global follows
	handOuts    uint64             // requests handed out so far
	notHolding  int                // requests handed out that hold no turn yet
	closed      bool

	epoch          time.Time // when the Frontier was made: entries' times count from it
	retries        int       // see WithRetries
	keepDuplicates bool      // see KeepDuplicates
	seen           map[uint64]struct{}
	duplicates     int
	outstanding    int           // requests pushed without a final answer
	idle           chan struct{} // closed when outstanding comes to 0, if Wait made it
}

// New returns an empty Frontier that hands requests out for t, configured
// by opts.
func New(t *polite.Transport, opts ...Option) *Frontier {
	f := &Frontier{t: t, domains: make(map[string]*domain), epoch: time.Now(), seen: make(map[uint64]struct{})}
	for _, opt := range opts {
		opt(f)
	}
	f.ready.less = func(a, b *domain) bool {
		if !a.readyAt.Equal(b.readyAt) {
			return a.readyAt.Before(b.readyAt)
		}
		return a.seq < b.seq
	}
	f.over.less = func(a, b *domain) bool { return a.inFlight < b.inFlight }
	return f
}

// closedError is what Push returns after Close. It matches net.ErrClosed,
// as a listener's Accept does after Close.
type closedError struct{}

func (closedError) Error() string        { return "frontier: push after Close" }
func (closedError) Is(target error) bool { return target == net.ErrClosed }

// Push adds req to the requests to hand out. It may be called in any
// order and at any time before Close, concurrently with Next. It fails if
// the Transport cannot key req, after Close (with an error that matches
// net.ErrClosed), and, unless KeepDuplicates, for a GET or HEAD request
// whose URL was pushed before (ErrDuplicate: the request is dropped and
// counted in Duplicates).
func (f *Frontier) Push(req *http.Request) error {
	key, err := f.t.Key(req)
	if err != nil {
		return fmt.Errorf("frontier: %w", err)
	}
	givenUp := f.t.GivenUp(key) != nil
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return closedError{}
	}
	if !f.keepDuplicates {
		if k, ok := seenKey(req); ok {
			if _, dup := f.seen[k]; dup {
				f.duplicates++
				return ErrDuplicate
			}
			f.seen[k] = struct{}{}
		}
	}
	f.outstanding++
	f.queueLocked(key, entry{req: req, attempt: 1}, givenUp, time.Time{})
	return nil
}

// queueLocked puts e at the end of key's line: a line the Transport gave
// up if givenUp, one that goes no sooner than notBefore if it is not zero.
func (f *Frontier) queueLocked(key string, e entry, givenUp bool, notBefore time.Time) {
	now := time.Now()
	d, ok := f.domains[key]
	if !ok {
		d = newDomain(key, f.t.Limit(key), now)
		f.domains[key] = d
	}
	if givenUp {
		d.giveUp(now)
	}
	e.pushed = now.Sub(f.epoch)
	d.queue.push(e)
	f.pending++
	if d.holdUntil(notBefore) && d.where == inReady {
		f.ready.fix(d)
	}
	if d.where == nowhere {
		f.placeLocked(d)
		f.notifyLocked(now)
	}
}

// Duplicates returns how many requests Push dropped because their URL
// was pushed before.
func (f *Frontier) Duplicates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.duplicates
}

// Close says that nothing more will be pushed. Next then hands out what is
// left, in turn, and returns io.EOF once nothing is: with WithRetries,
// once every request pushed has a final answer (see Done), since an answer
// may put its request back in line.
func (f *Frontier) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.notifyLocked(time.Now())
}

// Len returns how many pushed requests have not been handed out.
func (f *Frontier) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending
}

// Next returns the request whose domain can go soonest, within the limits
// the Frontier doc describes, blocking until its turn comes, or until one
// is pushed. It returns io.EOF once Close was called and nothing is left,
// and ctx's error when ctx ends first. The request returned carries its
// context's values and must be sent or cancelled (see Frontier).
func (f *Frontier) Next(ctx context.Context) (*http.Request, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nexting++
	defer func() { f.nexting-- }()
	var w *waiter
	for {
		if err := ctx.Err(); err != nil {
			f.notifyLocked(time.Now()) // pass on a wake-up this call may have taken
			return nil, err
		}
		now := time.Now()
		d := f.pickLocked()
		global := f.globalLocked(now)
		shared := d != nil && f.sharedScopes()
		if shared && d.checked && d.checkedAt != f.handOuts {
			d.checked = false // another domain's request since may hold turns in the scopes d shares
		}
		switch {
		case d != nil && d.givenUp:
			return f.handOutLocked(d), nil // the Transport refuses it at once
		case d != nil && global.readyAt.After(now):
			w = f.waitLocked(ctx, w, global.readyAt)
		case shared && f.notHolding > 0 && d.mayCheck(now):
			// The Transport's answer would miss a request that does not
			// hold its turns yet.
			w = f.waitLocked(ctx, w, time.Time{})
		case d == nil:
			if f.finishedLocked() {
				f.notifyLocked(now)
				return nil, io.EOF
			}
			w = f.waitLocked(ctx, w, time.Time{})
		case d.mayCheck(now):
			if f.checkLocked(d) {
				return f.handOutLocked(d), nil
			}
		case d.readyAt.After(now):
			w = f.waitLocked(ctx, w, d.readyAt)
		default:
			return f.handOutLocked(d), nil
		}
	}
}

// globalLocked returns the estimate of the global scope's turns under the
// limit in force (see polite.WithGlobalLimit): made anew when the limit
// changes, unpaced without one. A request to any domain moves it, so that
// Next does not hand out at once more requests than the scope lets go.
func (f *Frontier) globalLocked(now time.Time) *domain {
	l, ok := f.t.GlobalLimit()
	if !ok {
		l = config.Limit{Disabled: true}
	}
	if f.global == nil || !sameEstimate(f.globalLimit, l) {
		f.global, f.globalLimit = newDomain("", l, now), l
	}
	return f.global
}

// sharedScopes reports whether the Transport paces a domain's requests
// with others' too, so that an answer about one domain holds only until
// the next request of any is handed out.
func (f *Frontier) sharedScopes() bool {
	_, server := f.t.ServerLimit()
	_, global := f.t.GlobalLimit()
	return server || global
}

// shareLocked returns the most workers a domain may occupy while others
// have work left.
func (f *Frontier) shareLocked() int {
	domains := f.ready.len() + f.over.len() + f.checking
	if domains == 0 {
		return 1
	}
	workers := f.inFlight + f.nexting
	return max(1, (workers+domains-1)/domains)
}

// pickLocked returns the domain in ready whose turn comes first among
// those under the fair share, or nil. Domains at or over the share that
// come first are set aside in over until they are under it again. While a
// Next call is under way, some domain with work left is under the share
// (the requests in flight of R domains number fewer than W), so pickLocked
// returns nil only when that domain is being checked or ready is empty.
func (f *Frontier) pickLocked() *domain {
	share := f.shareLocked()
	for f.over.len() > 0 && f.over.items[0].inFlight < share {
		d := f.over.pop()
		f.enterReadyLocked(d)
	}
	for f.ready.len() > 0 {
		d := f.ready.items[0]
		if d.inFlight < share {
			return d
		}
		f.ready.pop()
		d.where = inOver
		f.over.push(d)
	}
	return nil
}

// checkLocked asks the Transport how long d, which pickLocked returned,
// would wait now, without holding the lock (with a shared limiter that is
// a round trip), and files the answer. It reports whether d can be handed
// out now.
func (f *Frontier) checkLocked(d *domain) bool {
	f.ready.remove(d)
	d.where = beingChecked
	f.checking++
	f.notifyLocked(time.Now()) // the next domain in line need not wait for this answer
	next, handOuts := d.queue.items[d.queue.head], f.handOuts
	f.mu.Unlock()
	wait := f.t.RequestWait(next.req)
	f.mu.Lock()
	now := time.Now()
	f.checking--
	d.where = nowhere
	d.setChecked(now, wait)
	d.checkedAt = handOuts
	f.placeLocked(d)
	stale := f.handOuts != handOuts && f.sharedScopes() // a request handed out meanwhile may share d's scopes
	if wait > 0 || d.readyAt.After(now) || stale || d.where != inReady || d.inFlight >= f.shareLocked() {
		f.notifyLocked(now)
		return false
	}
	return true
}

// handOutLocked takes d's next request and returns it carrying a ticket
// that frees d's worker when the request's flight ends, or when
// its context is done.
func (f *Frontier) handOutLocked(d *domain) *http.Request {
	now := time.Now()
	e := d.queue.pop()
	req := e.req
	f.pending--
	d.inFlight++
	f.inFlight++
	d.advance(now)
	f.global.advance(now)
	f.handOuts++
	f.placeLocked(d)
	fl := &flight{f: f, d: d, entry: e}
	tk := ticket.New(fl.end)
	if f.sharedScopes() {
		// Only then does Next wait for the request to hold its turns.
		f.notHolding++
		tk = ticket.NewHeld(fl.end, fl.held)
	}
	tk.SetQueued(now.Sub(f.epoch) - e.pushed)
	ctx := req.Context()
	fl.stop = context.AfterFunc(ctx, tk.Done) // fl.end waits for f.mu, so it sees stop
	f.notifyLocked(now)
	return req.WithContext(context.WithValue(ticket.With(ctx, tk), flightKey{}, fl))
}

// flight is a request handed out, until its ticket ends.
type flight struct {
	f        *Frontier
	d        *domain
	entry    entry // as it was queued
	stop     func() bool
	reported bool // Done was called
}

// flightKey is the context key under which a request handed out carries
// its flight.
type flightKey struct{}

// held notes that the request holds its turns, or has ended.
func (fl *flight) held() {
	f := fl.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notHolding--
	f.notifyLocked(time.Now())
}

func (fl *flight) end() {
	f, d := fl.f, fl.d
	f.mu.Lock()
	defer f.mu.Unlock()
	fl.stop()
	d.inFlight--
	f.inFlight--
	d.checked = false // its response may have paused the domain since the last answer
	switch d.where {
	case parked, nowhere:
		f.placeLocked(d)
	case inOver:
		f.over.fix(d)
	}
	f.notifyLocked(time.Now())
}

// placeLocked files d, which is in neither heap, where its state says:
// forgotten with nothing pending or in flight, parked at its
// MaxConcurrent, else ready.
func (f *Frontier) placeLocked(d *domain) {
	switch {
	case d.queue.len() == 0:
		if d.where == inReady {
			f.ready.remove(d)
		}
		d.where = nowhere
		if d.inFlight == 0 {
			delete(f.domains, d.key)
		}
	case d.maxConcurrent > 0 && d.inFlight >= d.maxConcurrent:
		if d.where == inReady {
			f.ready.remove(d)
		}
		d.where = parked
	case d.where == inReady:
		f.ready.fix(d)
	default:
		f.enterReadyLocked(d)
	}
}

func (f *Frontier) enterReadyLocked(d *domain) {
	f.seq++
	d.seq = f.seq
	d.where = inReady
	f.ready.push(d)
}

// finishedLocked reports whether Next has nothing more to hand out: Close
// was called, nothing is pending, and, with WithRetries, no answer can put
// a request back in line.
func (f *Frontier) finishedLocked() bool {
	return f.closed && f.pending == 0 && (f.retries == 0 || f.outstanding == 0)
}

// waiter is a Next call blocked until something may have changed.
type waiter struct{ wake chan struct{} }

// waitLocked blocks until notifyLocked wakes w, until (if not zero), or
// ctx's end, whichever comes first. Of the calls waiting for a turn, only
// the one waiting for the soonest keeps a timer. It returns w (made if
// nil) for the next wait.
func (f *Frontier) waitLocked(ctx context.Context, w *waiter, until time.Time) *waiter {
	if w == nil {
		w = &waiter{wake: make(chan struct{}, 1)}
	}
	f.waiting = append(f.waiting, w)
	var fire <-chan time.Time
	if !until.IsZero() && (f.timer == nil || until.Before(f.timerAt)) {
		f.timer, f.timerAt = w, until
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		fire = t.C
	}
	f.mu.Unlock()
	select {
	case <-w.wake:
	case <-fire:
	case <-ctx.Done():
	}
	f.mu.Lock()
	if f.timer == w {
		f.timer = nil
	}
	for i, x := range f.waiting {
		if x == w {
			f.waiting = append(f.waiting[:i], f.waiting[i+1:]...)
			break
		}
	}
	select {
	case <-w.wake: // a wake-up that came with the timer or ctx: spent
	default:
	}
	return w
}

// notifyLocked wakes a waiting Next call if something it could act on has
// changed: all of them once nothing is left after Close; one when a
// domain can be handed out or checked now; the timing one (or one, to
// time it) when the soonest turn comes sooner than it is timed for.
func (f *Frontier) notifyLocked(now time.Time) {
	if len(f.waiting) == 0 {
		return
	}
	if f.finishedLocked() {
		for _, w := range f.waiting {
			w.wake <- struct{}{}
		}
		f.waiting = f.waiting[:0]
		return
	}
	d := f.pickLocked()
	switch {
	case d == nil:
	case !d.readyAt.After(now) || d.mayCheck(now):
		f.wakeLocked(f.untimed())
	case f.timer == nil:
		f.wakeLocked(0)
	case d.readyAt.Before(f.timerAt):
		f.wakeLocked(f.index(f.timer))
	}
}

// untimed returns the index of a waiter that keeps no timer, or 0.
func (f *Frontier) untimed() int {
	for i, w := range f.waiting {
		if w != f.timer {
			return i
		}
	}
	return 0
}

func (f *Frontier) index(w *waiter) int {
	for i, x := range f.waiting {
		if x == w {
			return i
		}
	}
	return 0
}

// wakeLocked wakes the i-th waiter and takes it off the list.
func (f *Frontier) wakeLocked(i int) {
	w := f.waiting[i]
	f.waiting = append(f.waiting[:i], f.waiting[i+1:]...)
	if f.timer == w {
		f.timer = nil
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
