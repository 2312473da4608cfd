package limiter

import (
	"math"
	"slices"
	"time"

	"github.com/polite-go/polite/internal/feedback"
)

// none marks a time that is not set: no start yet, no pause, a full bucket.
const none = math.MinInt64

// keyState is everything a limiter remembers of one key. Times are
// nanoseconds on the limiter's clock.
//
// It keeps two schedules. The plan is the turns it has handed out: a new
// turn starts no earlier than the latest one, which lets the bucket be
// read only forward in time. The sent schedule is when requests really
// left, as the departure gate (confirm) notes them: a turn whose request
// leaves late (a late wake-up, a slow step before it) moves the turns
// after it, since what was sent is what a server sees, and a request
// leaves only when the sent schedule allows it too.
type keyState struct {
	plan, sent  schedule
	pausedUntil int64
	pauseWhy    Reason  // who asked for the pause until pausedUntil
	starts      []int64 // the starts, planned or made, that a quota may still count, oldest first
	window      int64   // the longest window starts are kept for: see historyWindow
	windowUntil int64   // until when window holds if the rule's longest is shorter
	turns       []turn  // the latest turns handed out, oldest first: see cancel
	turn        [1]turn // where turns starts, so that a key that waits for none holds its latest turn without an allocation
	seq         uint64  // the latest turn's ID
	born        uint64  // the turns up to this ID are not the state's: see renew and drop
	quietAt     int64   // from then on the state is as good as a fresh one
	fb          *feedback.State
	made        uint32 // counts the starts made
	restored    bool   // made elsewhere: the next rule fits its times (see fit)
}

// schedule is a token bucket and the latest start it let go.
type schedule struct {
	bucket bucket
	last   int64
}

// bucket is a token bucket: tokens at at; full if at is none.
type bucket struct {
	tokens float64
	at     int64
}

// turn is a turn handed out, with what giving it back restores.
type turn struct {
	id        uint64
	at        int64    // its start, planned or made
	plan      schedule // the plan before the turn was held
	sent      schedule // the sent schedule before it started, if started
	made      uint32   // the count of starts just after it started, if started
	started   bool
	cancelled bool
	wake      *waker // how its request sleeps until its turn; nil if Memory cannot move it, or once it started or was given back
}

// newKeyState returns a fresh state. A keyState is not copied once it is
// used: its turns may point into it.
func newKeyState() *keyState {
	return &keyState{plan: noSchedule, sent: noSchedule, pausedUntil: none, quietAt: none}
}

// renew makes s, a zero state or one Memory dropped, a fresh one for a new
// key. Its turn IDs go on from where they were, so that the turns handed
// out before, which were another key's, are not its own.
func (s *keyState) renew() {
	seq := s.seq
	*s = *newKeyState()
	s.seq, s.born = seq, seq
}

// drop makes none of the turns handed out so far s's: Memory forgot it, so
// they have nothing to keep apart.
func (s *keyState) drop() { s.born = math.MaxUint64 }

// handedOut reports whether s handed out the turn id, since it was made or
// renewed.
func (s *keyState) handedOut(id uint64) bool { return id > s.born }

var noSchedule = schedule{bucket: bucket{at: none}, last: none}

// after is t+d, or math.MaxInt64 where that would overflow: a wait too
// long to represent lasts forever instead of wrapping into the past.
func after(t int64, d time.Duration) int64 {
	if d > 0 && t > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return t + int64(d)
}

// tokenTime is how long a bucket refilling at rate per second takes to
// gain n tokens, rounded up to the microsecond as redislimiter's scripts
// round it (they count in microseconds), and at most math.MaxInt64.
func tokenTime(n, rate float64) time.Duration {
	d := math.Ceil(n*1e6/rate) * 1e3
	if !(d < math.MaxInt64) {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// level is the bucket's level at t, which must not precede b.at. From the
// nanosecond the bucket counts as full on, it is exactly full, not a
// rounding error short of it, so that a key is as good as fresh at quietAt.
func (b *bucket) level(t int64, rule *Rule) float64 {
	burst := float64(rule.Burst)
	if b.at == none {
		return burst
	}
	level := b.tokens + float64(max(t-b.at, 0))*rule.Rate/1e9
	if level >= burst || burst-level < 1e-6 && t-b.at >= int64(tokenTime(burst-b.tokens, rule.Rate)) {
		return burst
	}
	return level
}

// ready is the earliest time at or after t when the bucket holds a token.
func (b *bucket) ready(t int64, rule *Rule) int64 {
	if missing := 1 - b.level(t, rule); missing > 1e-9 {
		return after(t, tokenTime(missing, rule.Rate))
	}
	return t
}

// take takes a token at t.
func (b *bucket) take(t int64, rule *Rule) {
	b.tokens = b.level(t, rule) - 1
	b.at = t
}

// full is when the bucket is full again.
func (b *bucket) full(rule *Rule) int64 {
	if b.at == none {
		return none
	}
	return after(b.at, tokenTime(float64(rule.Burst)-b.tokens, rule.Rate))
}

// minGap is the least gap between two starts, and the reason for it.
type minGap struct {
	d   time.Duration
	why Reason
}

// minDelay is the least gap between two starts: the rule's, or what the
// server asked for when that is longer. It depends on rule and on what the
// state observed only, so a call that reads it more than once (reserve)
// reads it once and hands it on.
func (s *keyState) minDelay(rule *Rule) minGap {
	observed, why := s.fb.MinDelay(adaptiveStart(rule))
	if observed > rule.MinDelay {
		return minGap{observed, Reason(why)}
	}
	return minGap{rule.MinDelay, ReasonMinDelay}
}

// longestWindow is the longest window of rule's quotas; 0 without quotas.
func longestWindow(rule *Rule) time.Duration {
	var w time.Duration
	for _, q := range rule.Quotas {
		w = max(w, q.Window)
	}
	return w
}

// fit makes the state one that rule could have made by now, so that a
// state made under another rule, or restored from another process (whose
// clock may differ), holds no time further ahead than rule allows: a
// pause ends within rule's MaxPause; starts that no quota counts any more
// are forgotten (see historyWindow); and a restored state holds no start,
// turn or bucket later than one cycle of rule from now (see cycle).
func (s *keyState) fit(now int64, rule *Rule) {
	s.pausedUntil = min(s.pausedUntil, after(now, maxPause(rule)))
	if s.restored {
		s.restored = false
		limit := after(now, s.cycle(rule))
		for _, sc := range []*schedule{&s.plan, &s.sent} {
			sc.last, sc.bucket.at = min(sc.last, limit), min(sc.bucket.at, limit)
			sc.bucket.tokens = min(sc.bucket.tokens, float64(rule.Burst))
		}
		for i := range s.starts {
			s.starts[i] = min(s.starts[i], limit)
		}
	}
	w := time.Duration(s.historyWindow(now, rule))
	i := 0
	for i < len(s.starts) && after(s.starts[i], w) <= now {
		i++
	}
	s.starts = s.starts[i:]
	if len(s.starts) == 0 {
		s.starts = nil
	}
}

// historyWindow returns the longest window the starts are kept for at
// now, as redislimiter's history_window does: the longest of rule's
// quotas, or a longer one that an earlier rule had, for that window after
// the rule went without it. So a quota's history outlives a change of the
// quota, or its removal, while the state is held: put back, or made
// longer again, the quota counts the starts made meanwhile.
func (s *keyState) historyWindow(now int64, rule *Rule) int64 {
	if w := int64(longestWindow(rule)); w >= s.window || now >= s.windowUntil {
		s.window, s.windowUntil = w, after(now, time.Duration(w))
	}
	return s.window
}

// cycle is how long rule holds back a fresh key after a burst: the time
// to refill the bucket, or the gap between two starts if longer, and the
// jitter.
func (s *keyState) cycle(rule *Rule) time.Duration {
	d := s.minDelay(rule).d
	if rule.Rate > 0 {
		d = max(d, tokenTime(float64(rule.Burst), rule.Rate))
	}
	return min(d, math.MaxInt64-rule.Jitter) + rule.Jitter
}

// earliest returns the earliest start at or after now that every rule of
// the plan allows, gap being s.minDelay(rule), with jitter added to the gap
// since the latest start, and the rule that set it.
func (s *keyState) earliest(now int64, rule *Rule, gap minGap, jitter time.Duration) (int64, Reason) {
	t, reason := now, Reason("")
	later := func(u int64, why Reason) {
		if u > t {
			t, reason = u, why
		}
	}
	last := s.plan.last
	if last != none {
		later(last, ReasonQueue)
		if gap.d > 0 {
			later(after(last, gap.d), gap.why)
		}
	}
	later(s.pausedUntil, s.pauseWhy)
	for _, q := range rule.Quotas {
		if n := len(s.starts); n >= q.Requests {
			later(after(s.starts[n-q.Requests], q.Window), ReasonQuota)
		}
	}
	if rule.Rate > 0 {
		later(s.plan.bucket.ready(t, rule), ReasonRate)
	}
	if last != none && jitter > 0 {
		if t > now {
			t = after(t, jitter)
		} else {
			later(after(last, jitter), ReasonJitter)
		}
	}
	return t, reason
}

// allowed is the earliest start at or after now that the sent schedule
// allows, gap being s.minDelay(rule): what the server has seen must fit
// the rules too.
func (s *keyState) allowed(now int64, rule *Rule, gap time.Duration) int64 {
	t := now
	if s.sent.last != none && gap > 0 {
		t = max(t, after(s.sent.last, gap))
	}
	if rule.Rate > 0 {
		t = max(t, s.sent.bucket.ready(t, rule))
	}
	return max(t, s.pausedUntil)
}

// quiet is when the state becomes as good as a fresh one under rule, gap
// being s.minDelay(rule): its bucket full, its gaps, pause and quota
// windows over, and what it observed of its server (a backoff step, an
// adaptive gap) past what it remembers.
func (s *keyState) quiet(rule *Rule, gap minGap) int64 {
	q := s.pausedUntil
	if s.plan.last != none {
		q = max(q, after(after(s.plan.last, gap.d), rule.Jitter))
		if gap.why == ReasonAdaptive {
			// Remembered for as long again, as a backoff step is.
			q = max(q, after(after(s.plan.last, gap.d), gap.d))
		}
	}
	if s.sent.last != none {
		q = max(q, after(s.sent.last, gap.d))
	}
	if rule.Rate > 0 {
		q = max(q, s.plan.bucket.full(rule))
		if s.sent.bucket != s.plan.bucket {
			q = max(q, s.sent.bucket.full(rule))
		}
	}
	if n := len(s.starts); n > 0 {
		q = max(q, after(s.starts[n-1], time.Duration(s.window)))
	}
	if step := s.fb.Backoff(); step > 0 {
		// Remembered for as long again as its pause, so that a server
		// failing again soon after pauses the key twice as long.
		q = max(q, after(s.pausedUntil, step))
	}
	return q
}

// reserve holds into res the earliest turn at or after now, unless its
// wait would exceed maxWait (when positive). A turn that comes at once
// has its departure noted now, as the departure gate would (the caller
// leaves at once); if its request leaves later than departSlack after,
// confirm takes that back and notes it then. A later turn's departure is
// noted only by confirm.
func (s *keyState) reserve(now int64, rule *Rule, jitter, maxWait time.Duration, res *Reservation) {
	s.fit(now, rule)
	gap := s.minDelay(rule)
	t, reason := s.earliest(now, rule, gap, jitter)
	if t == now && s.sent != s.plan { // else earliest checked what allowed would
		if u := s.allowed(now, rule, gap.d); u > now {
			t, reason = u, ReasonQueue
		}
	}
	wait := time.Duration(t - now)
	res.wait, res.reason, res.degraded, res.rule = wait, reason, false, rule
	if maxWait > 0 && wait > maxWait {
		res.ok, res.id, res.at = false, 0, 0
		return
	}
	tr := s.hold(t, rule)
	if t == now {
		s.beginTurn(&tr, now, rule)
	}
	s.keep(&tr, now)
	res.ok, res.id, res.at, res.begun = true, tr.id, t, t == now
	s.quietAt = s.quiet(rule, gap)
}

// hold takes start t into the plan and returns its turn, now held.
func (s *keyState) hold(t int64, rule *Rule) turn {
	s.seq++
	tr := turn{id: s.seq, at: t, plan: s.plan}
	s.planStart(t, rule)
	return tr
}

// planStart takes start t into the plan: its bucket, its latest start and
// the starts a quota counts.
func (s *keyState) planStart(t int64, rule *Rule) {
	if rule.Rate > 0 {
		s.plan.bucket.take(t, rule)
	}
	s.plan.last = t
	if s.window > 0 {
		s.addStart(t)
	}
}

// beginTurn notes that tr's request starts at now.
func (s *keyState) beginTurn(tr *turn, now int64, rule *Rule) {
	tr.started, tr.sent, tr.at, tr.wake = true, s.sent, now, nil
	s.noteStart(now, rule)
	tr.made = s.made
}

// countStart counts a start at t that the caller made before s was made
// (Request.LastStart) in the plan and in the sent schedule.
func (s *keyState) countStart(t int64, rule *Rule) {
	s.planStart(t, rule)
	s.noteStart(t, rule)
}

// noteStart notes in the sent schedule that a request starts at now.
func (s *keyState) noteStart(now int64, rule *Rule) {
	s.sent.last = now
	if rule.Rate > 0 {
		s.sent.bucket.take(now, rule)
	}
	s.made++
}

// keep adds tr, the latest turn, held at now, to the turns a cancel may
// give back. It forgets the turns that no cancel can give back any more:
// those a started turn follows (a live one), and those whose time has
// come (their requests went, or go late, whether or not their callers
// confirm them). A turn forgotten and cancelled later frees its quota
// slots only, and the turns after it keep what it took.
//
// The started turn whose departure is the latest noted stays, so that
// confirm can take that departure back if its request is late to leave.
func (s *keyState) keep(tr *turn, now int64) {
	if s.turns == nil {
		s.turns = s.turn[:0]
	}
	i, latest := 0, -1
	for j := len(s.turns) - 1; j >= 0; j-- {
		if s.turns[j].started {
			i = j + 1
			if s.turns[j].made == s.made {
				latest = j
			}
			break
		}
	}
	for i < len(s.turns) && s.turns[i].at <= now {
		i++
	}
	n := 0
	if latest >= 0 {
		s.turns[0], n = s.turns[latest], 1
	}
	n += copy(s.turns[n:], s.turns[i:])
	if n == len(s.turns) {
		s.turns = append(s.turns, *tr)
		return
	}
	s.turns[n] = *tr // where a forgotten turn was: cutTurns need not clear it first
	s.cutTurns(n + 1)
}

// cutTurns keeps the first n turns. The others are cleared where the
// list held them, so that the waker of a request long gone does not keep
// its memory.
func (s *keyState) cutTurns(n int) {
	clear(s.turns[n:])
	s.turns = s.turns[:n]
}

// find returns the index in s.turns of turn id, or -1.
func (s *keyState) find(id uint64) int {
	for i := len(s.turns) - 1; i >= 0; i-- {
		if s.turns[i].id == id {
			return i
		}
	}
	return -1
}

// confirm is Turn.Confirm at now for res, a turn of this state, under
// rule, the rule in force at its departure.
func (s *keyState) confirm(now int64, res *Reservation, rule *Rule, jitter time.Duration) time.Duration {
	res.rule = rule
	s.fit(now, rule)
	gap := s.minDelay(rule)
	if i := s.find(res.id); i >= 0 && s.turns[i].started && s.turns[i].made == s.made {
		// Its departure was noted, but its request is late to leave (the
		// caller was held up after the gate): that departure is taken
		// back and noted anew below.
		tr := &s.turns[i]
		s.sent, s.made, tr.started = tr.sent, s.made-1, false
	}
	if s.pausedUntil > now || now > res.at && !s.fitsQuotas(res.at, now, rule) {
		// Paused after the turn was held, or so late that its start
		// would overfill a quota's window: the turn is not spent, but
		// given back and held anew, after the turns handed out.
		w := s.wakerOf(res.id)
		s.cancel(res.id, res.at, rule)
		t, reason := s.earliest(now, rule, gap, jitter)
		tr := s.hold(t, rule)
		tr.wake = w
		s.keep(&tr, now)
		res.reason, res.id, res.at = reason, tr.id, t
		if t > now {
			w.sleepsUntil(t)
			s.quietAt = s.quiet(rule, gap)
			return time.Duration(t - now)
		} // else the new turn may leave now: its departure is noted below
	}
	if u := s.allowed(now, rule, gap.d); u > now {
		s.wakerOf(res.id).sleepsUntil(u)
		return time.Duration(u - now)
	}
	if now > res.at {
		s.slip(res.at, now, rule)
		res.at = now
	}
	if i := s.find(res.id); i >= 0 {
		s.beginTurn(&s.turns[i], now, rule)
		s.cutTurns(copy(s.turns, s.turns[i:]))
	} else {
		s.noteStart(now, rule)
	}
	s.wakeNext(now, rule, gap.d)
	s.quietAt = s.quiet(rule, gap)
	return 0
}

// giveWaker makes w the waker of turn id, still to start, held at now
// for a request that accepts to wait maxWait (0: any wait).
func (s *keyState) giveWaker(id uint64, now int64, maxWait time.Duration, w *waker) {
	if i := s.find(id); i >= 0 && !s.turns[i].started && !s.turns[i].cancelled {
		w.waitsFor(s.turns[i].at, now, maxWait)
		s.turns[i].wake = w
	}
}

// wakerOf returns the waker of turn id; nil if it has none or is forgotten.
func (s *keyState) wakerOf(id uint64) *waker {
	if i := s.find(id); i >= 0 {
		return s.turns[i].wake
	}
	return nil
}

// wakeNext moves the wake-up of the next request waiting for a turn,
// after a departure noted at now, to when the gate will let it go, if
// that is later than it wakes: it then wakes once, not at its planned
// turn and again when the gate lets it go. A turn that a pause covers is
// left as it is: the gate holds it anew when it wakes (see confirm). gap
// is s.minDelay(rule).
func (s *keyState) wakeNext(now int64, rule *Rule, gap time.Duration) {
	for i := range s.turns {
		tr := &s.turns[i]
		if tr.started || tr.cancelled {
			continue
		}
		if tr.wake != nil && s.pausedUntil <= tr.at {
			tr.wake.moveTo(s.allowed(tr.at, rule, gap), now)
		}
		return
	}
}

// fitsQuotas reports whether the starts, with the one planned at at
// moved to now, fit every quota of rule: no window holds more starts than
// its quota allows. It moves the start in place and back, so that a late
// confirm, the common one, copies no starts.
func (s *keyState) fitsQuotas(at, now int64, rule *Rule) bool {
	if len(rule.Quotas) == 0 {
		return true
	}
	held := slices.Contains(s.starts, at)
	s.moveStart(at, now)
	defer func() {
		s.removeStart(now)
		if held {
			s.addStart(at)
		}
	}()
	for _, q := range rule.Quotas {
		for j := range s.starts {
			if k := j + q.Requests; k < len(s.starts) && after(s.starts[j], q.Window) > s.starts[k] {
				return false
			}
		}
	}
	return true
}

// slip moves the plan after a turn planned at at whose request starts at
// now, later: the turns after it follow from now.
func (s *keyState) slip(at, now int64, rule *Rule) {
	if s.window > 0 {
		s.moveStart(at, now)
	}
	s.follow(now, rule)
}

// follow makes the plan's next turns follow a start at t.
func (s *keyState) follow(t int64, rule *Rule) {
	if s.plan.last >= t {
		return
	}
	s.plan.last = t
	if b := &s.plan.bucket; rule.Rate > 0 && b.at != none && b.at < t {
		b.at = t // the token was taken at t, not before
	}
}

// cancel gives back turn id, planned to start at at. Every cancelled turn
// that no later live turn follows is given back: the plan goes back to
// what it was before the oldest of the cancelled turns at the tail, so
// that the next request goes as if they had never been asked for. A
// cancelled turn with a live turn after it frees its quota slots only:
// the turns after it were planned around it, and giving its token back
// would let a later request go sooner than the rules allow after the one
// before it.
func (s *keyState) cancel(id uint64, at int64, rule *Rule) {
	i := s.find(id)
	if i < 0 {
		s.removeStart(at)
		return
	}
	tr := &s.turns[i]
	if tr.cancelled {
		return
	}
	tr.cancelled, tr.wake = true, nil
	s.removeStart(tr.at)
	j := len(s.turns)
	for j > 0 && s.turns[j-1].cancelled {
		j--
	}
	if j == len(s.turns) {
		return
	}
	oldest := &s.turns[j]
	s.plan = oldest.plan
	if oldest.started && oldest.made == s.made {
		s.sent = oldest.sent // its start is the latest made: no other start is lost
	}
	s.cutTurns(j)
	s.follow(s.sent.last, rule)
	s.quietAt = s.quiet(rule, s.minDelay(rule))
}

// addStart adds start t, keeping the starts in order.
func (s *keyState) addStart(t int64) {
	i := len(s.starts)
	for i > 0 && s.starts[i-1] > t {
		i--
	}
	s.starts = slices.Insert(s.starts, i, t)
}

// removeStart deletes one start equal to t, if there is one.
func (s *keyState) removeStart(t int64) {
	for i := len(s.starts) - 1; i >= 0; i-- {
		if s.starts[i] == t {
			s.starts = slices.Delete(s.starts, i, i+1)
			return
		}
	}
}

// moveStart turns one start at at into one at to. A start already
// forgotten (it left every window before its request started) is counted
// anew at to.
func (s *keyState) moveStart(at, to int64) {
	s.removeStart(at)
	s.addStart(to)
}

// observed is what the key observed of its server, made when it first
// observes something.
func (s *keyState) observed() *feedback.State {
	if s.fb == nil {
		s.fb = new(feedback.State)
	}
	return s.fb
}

// pause makes nothing start before until, because of why.
func (s *keyState) pause(until int64, why Reason) {
	if until > s.pausedUntil {
		s.pausedUntil, s.pauseWhy = until, why
	}
	s.quietAt = max(s.quietAt, until)
}

// state reports the key at now, holding nothing.
func (s *keyState) state(now int64, rule *Rule, wall time.Time) State {
	s.fit(now, rule)
	gap := s.minDelay(rule)
	t, reason := s.earliest(now, rule, gap, 0)
	if u := s.allowed(now, rule, gap.d); u > t {
		t, reason = u, ReasonQueue
	}
	st := State{Wait: time.Duration(t - now), Reason: reason, MinDelay: gap.d}
	if s.pausedUntil > now {
		st.Paused, st.PauseReason = time.Duration(s.pausedUntil-now), s.pauseWhy
	}
	for _, q := range rule.Quotas {
		qs := QuotaState{Limit: q.Requests, Window: q.Window}
		used := 0
		for _, start := range s.starts[max(len(s.starts)-q.Requests, 0):] {
			if after(start, q.Window) <= now {
				continue
			}
			if used == 0 {
				qs.NextFree = wall.Add(time.Duration(start + int64(q.Window) - now))
			}
			used++
		}
		qs.Remaining = max(q.Requests-used, 0)
		st.Quotas = append(st.Quotas, qs)
	}
	return st
}
