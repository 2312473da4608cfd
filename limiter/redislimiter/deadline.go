package redislimiter

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlines bound calls to Redis by a timeout with few timers: the calls
// that start within one slot, a sixteenth of the timeout, share one
// deadline, a timeout after the slot ends, so that each call gets the
// timeout and at most a sixteenth more. A context.WithTimeout per call
// would start and stop a timer for every reservation; shared deadlines
// start one per slot.
//
// cut ends every call under way at once: when Redis is known to be down,
// so that the calls waiting on it stop retrying, and dialling, in the
// client's pool.
type deadlines struct {
	timeout, slot time.Duration
	cur           atomic.Pointer[deadline]

	mu   sync.Mutex
	live []*deadline // oldest first; those whose time has passed are dropped as new ones come
}

func newDeadlines(timeout time.Duration) *deadlines {
	return &deadlines{timeout: timeout, slot: max(timeout/16, 1)}
}

// deadline is a context without values that ends at a time, or when cut,
// shared by the calls that start before its slot ends.
type deadline struct {
	at      time.Time
	slotEnd time.Time
	done    chan struct{}
	once    sync.Once

	mu   sync.Mutex
	owns []context.CancelFunc // of the calls' own contexts that end with it
}

var _ context.Context = (*deadline)(nil)

func (d *deadline) Deadline() (time.Time, bool) { return d.at, true }
func (d *deadline) Done() <-chan struct{}       { return d.done }
func (d *deadline) Value(any) any               { return nil }

func (d *deadline) Err() error {
	select {
	case <-d.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// current returns the deadline of calls that start at now, making it if
// need be, so that it is never less than the timeout away. Only the call
// that makes a deadline starts its timer.
func (ds *deadlines) current(now time.Time) *deadline {
	for {
		d := ds.cur.Load()
		if d != nil && now.Before(d.slotEnd) {
			return d
		}
		next := &deadline{at: now.Add(ds.slot + ds.timeout), slotEnd: now.Add(ds.slot), done: make(chan struct{})}
		if ds.cur.CompareAndSwap(d, next) {
			time.AfterFunc(next.at.Sub(now), next.end)
			ds.mu.Lock()
			i := 0
			for i < len(ds.live) && !ds.live[i].at.After(now) {
				i++
			}
			ds.live = append(ds.live[i:], next)
			ds.mu.Unlock()
			return next
		}
	}
}

// end ends d and the calls' own contexts that end with it.
func (d *deadline) end() {
	d.once.Do(func() {
		close(d.done)
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, cancel := range d.owns {
			cancel()
		}
		d.owns = nil
	})
}

// cut ends every call under way, but those whose own context ends before
// the timeout would: they are not bounded by a shared deadline.
func (ds *deadlines) cut() {
	ds.mu.Lock()
	live := ds.live
	ds.live = nil
	ds.cur.Store(nil)
	ds.mu.Unlock()
	for _, d := range live {
		d.end()
	}
}

// bound returns ctx bounded by the timeout, and what to call once the
// call is over. A ctx that is never cancelled gets a shared deadline, with
// ctx's values; one that already ends in time is bounded already; others
// get a context of their own, ending at the shared deadline or when it is
// cut.
func (ds *deadlines) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	d := ds.current(time.Now())
	if ctx.Done() == nil {
		if ctx == context.Background() {
			return d, func() {}
		}
		return withValues{d, ctx}, func() {}
	}
	if at, ok := ctx.Deadline(); ok && !at.After(d.at) {
		return ctx, func() {}
	}
	own, cancel := context.WithDeadline(ctx, d.at)
	d.mu.Lock()
	if d.Err() == nil {
		d.owns = append(d.owns, cancel)
	} else {
		cancel()
	}
	d.mu.Unlock()
	return own, cancel
}

// withValues is a shared deadline with the values of a context that is
// never cancelled.
type withValues struct {
	*deadline
	values context.Context
}

func (c withValues) Value(key any) any { return c.values.Value(key) }

// sharedDeadline returns the shared deadline that ctx is, with or without
// values; nil when ctx is neither.
func sharedDeadline(ctx context.Context) *deadline {
	switch c := ctx.(type) {
	case *deadline:
		return c
	case withValues:
		return c.deadline
	}
	return nil
}
