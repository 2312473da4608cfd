package limiter

import (
	"context"
	"fmt"
	"time"

	"github.com/polite-go/polite/internal/maxwait"
)

// Wait reserves r's turn in l, sleeps until it comes and confirms its
// departure (Turn.Confirm), sleeping again while Confirm holds it back (a
// pause the server asked for meanwhile, an earlier request that left
// late). It fails at once, holding nothing, when the turn would come
// after ctx's deadline (an error wrapping context.DeadlineExceeded) or
// after r.MaxWait (ErrWaitTooLong); Waited.Wait then says how long the
// request would have waited. When ctx ends during the wait, the turn is
// given back and ctx.Err() returned. Otherwise Waited.Wait is the whole
// time waited. Wait is WaitTurns with one turn.
//
// The caller's request must leave as soon as Wait returns: Wait noted its
// departure then, and the next turns of the key follow from it.
func Wait(ctx context.Context, l Limiter, r Request) (Waited, error) {
	var res [1]Reservation
	return WaitTurns(ctx, l, &Turns{Requests: []Request{r}, Reservations: res[:], MaxWait: r.MaxWait})
}

// Turns is a request's turns in one key or several (its domain, its
// server, one all requests share), for WaitTurns. It is not safe for
// concurrent use.
type Turns struct {
	// Requests ask for the turns, in the order WaitTurns holds them.
	Requests []Request
	// Reservations are as many as Requests: WaitTurns keeps each turn
	// there.
	Reservations []Reservation
	// MaxWait is the longest acceptable wait for all the turns; 0 means
	// any wait is acceptable. The Requests' own MaxWait is not read:
	// WaitTurns sets it to what is left of this one.
	MaxWait time.Duration
	// Rules, when set, gives the Rule in force now for Requests[i]: the
	// departure gate checks each turn under it, so that a limit changed
	// while the request waited holds for it. Nil means each Request's
	// Rule.
	Rules RulesNow
	// Held, when set, is called each time the request holds every turn,
	// before it sleeps for the last one to come.
	Held func()
	// Reserved is how many of Reservations, from the first, hold turns
	// the caller reserved already through the same Limiter, for
	// Requests[i] within MaxWait (as ReserveAtOnce leaves one): WaitTurns
	// waits for them as for its own, and the wait began when the first
	// was reserved. 0 means none: WaitTurns reserves every turn.
	Reserved int

	// wait is the state of WaitTurns, here rather than on the stack of a
	// request that waits: 60,000 waiting goroutines each grow their stack
	// past its starting size when it holds the whole wait.
	wait turnWait
}

// RulesNow gives the Rule in force now for the turns of a Turns.
type RulesNow interface {
	// RuleNow returns the Rule in force now for Requests[i].
	RuleNow(i int) *Rule
}

// Waited is how WaitTurns went.
type Waited struct {
	// Wait is how long the request waited, from the call (its first
	// reservation's reading of the clock, when ctx has no deadline) to its
	// departure; 0 when no turn held it back. On failure, it is how long
	// from the call the request would have waited, and RetryAt when its
	// turn would have come.
	Wait    time.Duration
	RetryAt time.Time
	// Last is the index of the turn that came last, which made the request
	// wait, and Reason the rule that set that turn; -1 and "" when none
	// made it wait.
	Last   int
	Reason Reason
	// Far is the index of the latest turn that came more than a
	// millisecond later than when it was held, so that the others were
	// given back while the request waited for it alone; -1 when none did.
	Far int
	// Degraded is true when a fallback made one of the reservations.
	Degraded bool
	// Sent is when the request left: when the departure gate let it go.
	Sent time.Time
}

// departSlack is how long after the departure a Limiter noted (its
// Reservation's Start, once Confirm let it go) a request may still leave:
// one held up longer passes the gate again, which notes it anew. It is
// longer than a busy machine's usual scheduling delays, so that a request
// passes the gate again only when it was held up for real.
const departSlack = 10 * time.Millisecond

// turnSlack is how far apart two keys' turns may be and still be taken as
// one: a request holds a turn in one key at most that long while it
// waits for another.
const turnSlack = time.Millisecond

// WaitTurns waits for a request's turn in every key of t, as Wait does for
// one, and confirms its departure in each. It fails at once, holding
// nothing, when a turn would come after ctx's deadline or t.MaxWait, and
// gives back every turn it holds when ctx ends or a Limiter fails. It holds
// a turn in one key while it waits for another only as long as a
// millisecond: it holds the turns in order; when one comes later than
// that, it gives back those it holds, waits for that one alone, then
// holds the others again. The departure gate is all or nothing: when a
// key's Confirm holds the request back, the departures noted in the keys
// before it are given back with their turns, so that a request never holds
// a noted departure in one key while it waits for another.
//
// A request that reaches the end of the wait more than 10 ms after a
// departure was noted for it (its goroutine held up after the gate)
// passes the gate again, which notes its departure anew; for a request
// whose turns all came at once, each Limiter's Confirm checks that (as
// Memory's and redislimiter's do), and WaitTurns reads no clock of its
// own. The caller's
// request must leave as soon as WaitTurns returns nil; a caller that has
// steps of its own before it sends the request calls Leave last.
func WaitTurns(ctx context.Context, l Limiter, t *Turns) (Waited, error) {
	err := t.wait.run(ctx, l, t, time.Time{})
	return t.wait.w, err
}

// Leave is the departure gate once more, for a request that WaitTurns let
// go with t (or ReserveAtOnce, its Reservation then put in t): called as
// the very last step before the request is sent, it returns nil at once
// when the request leaves within 10 ms of the departures noted for it,
// and otherwise passes the gate again, as WaitTurns does, sleeping while a
// key holds it back. On failure it gives back every turn, as WaitTurns
// does, and the request must not be sent.
func Leave(ctx context.Context, l Limiter, t *Turns) error {
	late := false
	for i := range t.Reservations {
		late = late || time.Since(t.Reservations[i].start) > departSlack
	}
	if !late {
		return nil
	}
	return t.wait.run(ctx, l, t, time.Now())
}

// init sets up tw for a wait through l's turns t that begins at now; a
// zero now begins it when the first reservation reads the clock, which
// then needs no reading of its own, unless ctx has a deadline to bound it.
//
//go:noinline
func (tw *turnWait) init(ctx context.Context, l Limiter, t *Turns, now time.Time) {
	if _, ok := ctx.Deadline(); ok && now.IsZero() {
		now = time.Now()
	}
	tw.ctx, tw.l, tw.t, tw.start, tw.again = ctx, l, t, now, false
	tw.w = Waited{Last: -1, Far: -1}
	tw.maxWait, tw.cause = maxwait.Bound(ctx, t.MaxWait, ErrWaitTooLong, now)
}

// run is the loop of WaitTurns: it holds the turns not held yet, sleeps until
// the latest comes, and passes the departure gate, until every key lets
// the request go. It reads the clock only where a time changes what it
// does: a request whose turns all came at once, each Confirm having
// checked that its departure still holds, leaves at the departure its
// Limiter noted; the others read the clock after the gate, to check that
// they are not late and to say when they left.
//
// run is all of WaitTurns, which passes a zero now (a new wait: no turn
// held yet), and of Leave's second pass; it sleeps inline: each frame of
// a waiting request's stack costs every garbage collection a scan.
func (tw *turnWait) run(ctx context.Context, l Limiter, t *Turns, now time.Time) error {
	begins := now.IsZero() // WaitTurns: no turn is held yet
	tw.init(ctx, l, t, now)
	now = tw.start // still zero when the first reservation is to set it (see init)
	if begins {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range t.Reservations[t.Reserved:] {
			t.Reservations[t.Reserved+i].ok = false
		}
		if t.Reserved > 0 && now.IsZero() {
			tw.beginAt(&t.Reservations[0])
			now = tw.start
			tw.giveWaker(&t.Reservations[0], tw.maxWait)
		}
	}
	w := &tw.w
	for {
		due, waits, err := tw.hold(now, w)
		if err != nil {
			return tw.fail(err)
		}
		if waits {
			now = time.Now()
			if d := due.Sub(now); d > 0 {
				timer := tw.wake.sleep(d)
				select {
				case <-timer.C:
				case <-ctx.Done():
					timer.Stop()
					w.Wait, w.RetryAt = due.Sub(tw.start), due
					return tw.fail(ctx.Err())
				}
				tw.again = true
				w.Last = tw.latest()
				w.Reason = t.Reservations[w.Last].reason
			}
		}
		if !tw.allHeld() {
			now = time.Now()
			continue
		}
		left, err := tw.depart()
		if err != nil {
			return tw.fail(err)
		}
		if left && !waits {
			w.Sent = t.Reservations[tw.latest()].start
			tw.noteDegraded()
			return nil
		}
		now = time.Now()
		if !left || lateToLeave(t.Reservations, now) {
			tw.again = true
			continue
		}
		w.Sent = now
		if w.Last >= 0 {
			w.Wait = w.Sent.Sub(tw.start)
		}
		tw.noteDegraded()
		return nil
	}
}

// noteDegraded notes in w, as the request leaves, whether a fallback
// made one of its reservations.
func (tw *turnWait) noteDegraded() {
	for i := range tw.t.Reservations {
		tw.w.Degraded = tw.w.Degraded || tw.t.Reservations[i].degraded
	}
}

// turnWait is a call of WaitTurns or Leave.
type turnWait struct {
	ctx     context.Context
	l       Limiter
	t       *Turns
	start   time.Time
	maxWait time.Duration
	cause   error
	wake    waker // its timer, which a late departure before it moves
	// again is true once the request slept, or came back to the gate:
	// the rules may have changed since it took its turns.
	again bool
	w     Waited // what WaitTurns returns
}

// hold holds at now (zero: at the first reservation's reading of the
// clock), in order, the turns not held yet, until one comes
// later than turnSlack from now (it then gives back the others) or one
// already held does. It returns when the latest turn held comes, and
// whether the request may have to wait for it (false when every turn held
// was granted at once); it fails when that is past maxWait.
func (tw *turnWait) hold(now time.Time, w *Waited) (time.Time, bool, error) {
	res := tw.t.Reservations
	for i := range res {
		if res[i].ok {
			continue
		}
		if last := tw.latest(); last >= 0 && res[last].start.Sub(now) > turnSlack {
			break // wait for that one first
		}
		if err := tw.reserve(i, now, w); err != nil {
			return time.Time{}, false, err
		}
		if now.IsZero() {
			now = tw.start // the wait began with this reservation
		}
		if res[i].wait > turnSlack && len(res) > 1 {
			w.Far = i
			if err := tw.giveBack(i); err != nil {
				return time.Time{}, false, err
			}
			break
		}
	}
	last, waits := tw.latest(), tw.again
	for i := range res {
		waits = waits || res[i].ok && res[i].wait > 0
	}
	due := res[last].start
	if late := due.Sub(tw.start); tw.maxWait > 0 && late > tw.maxWait {
		// A gate moved a turn past maxWait: fail now, as reserve would.
		w.Wait, w.RetryAt = late, due
		return time.Time{}, false, maxwait.Exceeded(tw.t.Requests[last].Key, time.Until(due), tw.cause)
	}
	if tw.t.Held != nil && tw.allHeld() {
		tw.t.Held()
	}
	return due, waits, nil
}

// reserve holds turn i at now, within what is left of maxWait.
//
//go:noinline
func (tw *turnWait) reserve(i int, now time.Time, w *Waited) error {
	r := &tw.t.Requests[i] // its own MaxWait is not read: WaitTurns sets it
	r.MaxWait = 0
	if tw.maxWait > 0 {
		r.MaxWait = max(tw.maxWait-now.Sub(tw.start), 1)
	}
	got, err := tw.l.Reserve(tw.ctx, *r)
	if err != nil {
		return err
	}
	res := &tw.t.Reservations[i]
	*res = got
	tw.giveWaker(res, r.MaxWait)
	if now.IsZero() {
		tw.beginAt(res)
		now = tw.start
	}
	if !res.ok {
		return tw.refused(r.Key, res, now, w)
	}
	if res.start.IsZero() {
		res.start = now.Add(res.wait)
	}
	return nil
}

// giveWaker gives a Memory the waker of a request whose only turn res
// is a later one, within maxWait of when it was reserved, so that a
// request that leaves late before it moves its wake-up instead of waking
// it to sleep again (see Memory.wakeOn). With several turns, the request
// waits for each turn alone (see hold), which a moved wake-up would not.
func (tw *turnWait) giveWaker(res *Reservation, maxWait time.Duration) {
	if m, ok := tw.l.(*Memory); ok && len(tw.t.Reservations) == 1 {
		m.wakeOn(res, &tw.wake, maxWait)
	}
}

// beginAt begins the wait when the Limiter made res, its first
// reservation: at the clock's reading that set res's start, or now when
// the Limiter gives no start.
func (tw *turnWait) beginAt(res *Reservation) {
	if res.ok && !res.start.IsZero() {
		tw.start = res.start.Add(-res.wait)
	} else {
		tw.start = time.Now()
	}
}

// refused is the failure of key's turn res, refused at now because it would
// have come past what is left of maxWait. It is a function of its own so
// that the frame of the common path stays small: every waiting request's
// stack holds it.
//
//go:noinline
func (tw *turnWait) refused(key string, res *Reservation, now time.Time, w *Waited) error {
	w.Wait, w.RetryAt = now.Sub(tw.start)+res.wait, now.Add(res.wait)
	return maxwait.Exceeded(key, res.wait, tw.cause)
}

// depart is the departure gate for every turn, in order: it reports
// whether the request may leave now, every departure noted. When a
// key's Confirm holds it back, the turns before it, whose departures it
// noted, and those after it, are given back: the loop holds them again
// once the turn held back comes.
//
// A turn granted at once, to a request that neither slept nor came back
// to the gate, is confirmed under the rule it was reserved with (the rule
// in force a moment ago), and its Limiter's Confirm checks how long ago
// that was; for the others, the gate reads the rules in force and the
// clock.
func (tw *turnWait) depart() (bool, error) {
	res := tw.t.Reservations
	var now time.Time
	for i := range res {
		fresh := !tw.again && res[i].wait <= 0
		var rule *Rule
		if !fresh {
			if now.IsZero() {
				now = time.Now()
			}
			if tw.t.Rules != nil {
				rule = tw.t.Rules.RuleNow(i)
			}
		}
		more, err := res[i].Confirm(tw.ctx, rule)
		if err != nil {
			return false, err
		}
		if more > 0 {
			res[i].start = time.Now().Add(more)
			tw.again = true
			return false, tw.giveBack(i)
		}
		if !fresh && now.Sub(res[i].start) > departSlack {
			// A Limiter that says no later departure than that noted it
			// within the call: Confirm would not have let a departure
			// noted so long before go.
			res[i].start = now
		}
	}
	return true, nil
}

// lateToLeave reports whether a request whose departure every key of res
// noted reaches now later than departSlack after one of them (its
// goroutine was held up after the gate: a lock handed on, a collection):
// the gate then runs again, taking those departures back and noting them
// anew, so that what the server sees keeps the gaps. A Limiter that does
// not say when it noted a departure (a zero Start) noted it within the
// gate, a moment ago.
func lateToLeave(res []Reservation, now time.Time) bool {
	for i := range res {
		if now.Sub(res[i].start) > departSlack {
			return true
		}
	}
	return false
}

// latest returns the index of the held turn that comes last; -1 if none
// is held.
func (tw *turnWait) latest() int {
	res, last := tw.t.Reservations, -1
	for i := range res {
		if res[i].ok && (last < 0 || res[i].start.After(res[last].start)) {
			last = i
		}
	}
	return last
}

func (tw *turnWait) allHeld() bool {
	for i := range tw.t.Reservations {
		if !tw.t.Reservations[i].ok {
			return false
		}
	}
	return true
}

// fail gives back every turn held and returns err, saying so when giving
// one back failed too.
func (tw *turnWait) fail(err error) error {
	if cerr := tw.giveBack(-1); cerr != nil {
		return fmt.Errorf("%w (and %v)", err, cerr)
	}
	return err
}

// giveBack gives back every turn held but the one at keep (none if keep
// is -1), and returns the first error a Cancel returned.
func (tw *turnWait) giveBack(keep int) error {
	var first error
	for i := range tw.t.Reservations {
		res := &tw.t.Reservations[i]
		if i == keep || !res.ok {
			continue
		}
		if err := res.Cancel(context.WithoutCancel(tw.ctx)); err != nil && first == nil {
			first = fmt.Errorf("limiter: giving the turn back: %w", err)
		}
		res.ok = false
	}
	return first
}
