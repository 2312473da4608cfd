package limiter

import (
	"math"
	"sync/atomic"
	"time"
)

// waker is the timer a waiting request sleeps on, as Memory sees it: a
// request that leaves late moves the turns after it (see keyState.slip),
// and so moves the wake-up of the next request waiting for the key,
// which would otherwise wake at its planned turn only to find that the
// departure gate holds it back, and sleep again. Under load (a busy
// machine wakes requests late), most waiting requests did.
//
// The timer is the request's own; due and until are Memory's, read and
// written under the lock of the key whose turn the request holds.
type waker struct {
	timer atomic.Pointer[time.Timer] // nil until the request first sleeps
	// due is when the request's timer wakes it, on Memory's clock; until
	// is the latest it may wake (its MaxWait, its context's deadline): a
	// wake-up moved past it would let the request wait longer than it
	// accepts, where the gate fails it at once.
	due, until int64
	// bubbled is whether the request runs in a testing/synctest bubble,
	// whose timers only goroutines of the same bubble may reset.
	bubbled bool
}

// sleep sets w's timer to fire in d, making it on first use, and returns
// it.
func (w *waker) sleep(d time.Duration) *time.Timer {
	t := w.timer.Load()
	if t == nil {
		t = time.NewTimer(d)
		w.timer.Store(t)
		return t
	}
	t.Reset(d)
	return t
}

// waitsFor notes that w's request, which reserved at now a turn at t
// and accepts to wait maxWait (0: any wait), sleeps until t.
func (w *waker) waitsFor(t, now int64, maxWait time.Duration) {
	w.due, w.until, w.bubbled = t, math.MaxInt64, inBubble()
	if maxWait > 0 {
		w.until = after(now, maxWait)
	}
}

// sleepsUntil notes that w's request, held back by the departure gate,
// sleeps until u; w may be nil.
func (w *waker) sleepsUntil(u int64) {
	if w != nil {
		w.due = u
	}
}

// moveTo makes w's request wake at u, on Memory's clock, where now is,
// if that is later than it would and not past until. A request not
// asleep yet (it is about to sleep until its turn), or whose timer the
// caller may not reset (one of them runs in a synctest bubble, the other
// not), is left as it is: at worst it wakes at its turn and the gate
// holds it back, as it would without a waker.
func (w *waker) moveTo(u, now int64) {
	if u <= w.due || u > w.until || inBubble() != w.bubbled {
		return
	}
	if t := w.timer.Load(); t != nil {
		t.Reset(time.Duration(u - now))
		w.due = u
	}
}

// inBubble reports whether the calling goroutine runs in a
// testing/synctest bubble: there the clock is fake, and its times carry
// no monotonic reading. Resetting a bubble's timer from outside it ends
// the program, and an outside timer reset from inside it is set on the
// fake clock.
func inBubble() bool {
	now := time.Now()
	return now == now.Round(0) // Round(0) drops the monotonic reading only
}
