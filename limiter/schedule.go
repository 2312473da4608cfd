package limiter

import (
	"math"
	"time"
)

// keyState is everything a limiter remembers of one key. Times are
// nanoseconds on the limiter's clock. Starts never go backwards: a new
// reservation starts no earlier than the latest one, which keeps each
// quota's window a queue and lets the bucket be read only forward in time.
// Its methods take their Rule by pointer: this is the path of every
// request, and copying a Rule into each call cost more than the decision.
type keyState struct {
	tokens      float64 // bucket tokens at tokensAt, if used; full otherwise
	tokensAt    int64
	used        bool
	last        int64 // start of the latest reservation, if hasLast
	hasLast     bool
	pausedUntil int64
	quietAt     int64 // from then on the state is as good as a fresh one
	windows     []window
	gen         uint32 // tags this state's reservation IDs, told apart from an earlier state's of the key
	seq         uint32 // counts this state's reservations
	undo        undo
}

// undo holds what the latest reservation changed, so that cancelling it
// restores the key exactly.
type undo struct {
	valid    bool
	used     bool
	tokens   float64
	tokensAt int64
	last     int64
	hasLast  bool
	quietAt  int64
}

// window is a quota's sliding window: a ring of the latest starts, at most
// as many as the quota allows, so a quota of n requests costs 8n bytes.
type window struct {
	starts  []int64
	head, n int
	// What the latest push overwrote, for undo.
	evicted    int64
	wasFull    bool
	pushedLast bool
}

func newKeyState(rule Rule) *keyState {
	s := &keyState{pausedUntil: math.MinInt64}
	s.fitWindows(&rule)
	return s
}

// after is t+d, or math.MaxInt64 where that would overflow: a wait too
// long to represent lasts forever instead of wrapping into the past.
func after(t int64, d time.Duration) int64 {
	if d > 0 && t > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return t + int64(d)
}

// tokenTime is how long a bucket refilling at rate per second takes to
// gain n tokens, rounded up, and at most math.MaxInt64.
func tokenTime(n, rate float64) time.Duration {
	d := math.Ceil(n * 1e9 / rate)
	if !(d < math.MaxInt64) {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// fitWindows makes one window per quota of rule, keeping the history of
// those that did not change.
func (s *keyState) fitWindows(rule *Rule) {
	if len(s.windows) == len(rule.Quotas) {
		fits := true
		for i, q := range rule.Quotas {
			fits = fits && len(s.windows[i].starts) == q.Requests
		}
		if fits {
			return
		}
	}
	s.windows = make([]window, len(rule.Quotas))
	for i, q := range rule.Quotas {
		s.windows[i].starts = make([]int64, q.Requests)
	}
}

// tokensAtTime is the bucket's level at t, which must not precede tokensAt.
// From the nanosecond commit counted it full on, it is exactly full, not a
// rounding error short of it, so that a key is as good as fresh at quietAt.
func (s *keyState) tokensAtTime(t int64, rule *Rule) float64 {
	burst := float64(rule.Burst)
	if !s.used {
		return burst
	}
	level := s.tokens + float64(t-s.tokensAt)*rule.Rate/1e9
	if level >= burst || burst-level < 1e-6 && t-s.tokensAt >= int64(tokenTime(burst-s.tokens, rule.Rate)) {
		return burst
	}
	return level
}

// earliest returns the earliest start at or after now that every rule
// allows, with jitter added to the gap since the latest start, and the
// rule that set it.
func (s *keyState) earliest(now int64, rule *Rule, jitter time.Duration) (int64, string) {
	t, reason := now, ""
	later := func(u int64, why string) {
		if u > t {
			t, reason = u, why
		}
	}
	if s.hasLast {
		later(s.last, ReasonQueue)
		if rule.MinDelay > 0 {
			later(after(s.last, rule.MinDelay), ReasonMinDelay)
		}
	}
	later(s.pausedUntil, ReasonPause)
	for i, q := range rule.Quotas {
		if w := &s.windows[i]; w.n == len(w.starts) {
			later(after(w.starts[w.head], q.Window), ReasonQuota)
		}
	}
	if rule.Rate > 0 {
		if missing := 1 - s.tokensAtTime(t, rule); missing > 0 {
			later(after(t, tokenTime(missing, rule.Rate)), ReasonRate)
		}
	}
	if s.hasLast && jitter > 0 {
		if t > now {
			t = after(t, jitter)
		} else {
			later(after(s.last, jitter), ReasonJitter)
		}
	}
	return t, reason
}

// commit claims start t, which earliest returned, and returns the
// reservation's ID.
func (s *keyState) commit(t int64, rule *Rule) uint64 {
	// Field by field: a composite literal is built on the stack and then
	// copied, which costs as much as the rest of commit.
	u := &s.undo
	u.valid, u.used, u.hasLast = true, s.used, s.hasLast
	u.tokens, u.tokensAt, u.last, u.quietAt = s.tokens, s.tokensAt, s.last, s.quietAt
	s.quietAt = max(s.quietAt, after(after(t, rule.MinDelay), rule.Jitter))
	if rule.Rate > 0 {
		s.tokens = s.tokensAtTime(t, rule) - 1
		s.tokensAt, s.used = t, true
		refill := tokenTime(float64(rule.Burst)-s.tokens, rule.Rate)
		s.quietAt = max(s.quietAt, after(t, refill))
	}
	s.last, s.hasLast = t, true
	for i, q := range rule.Quotas {
		s.windows[i].push(t)
		s.quietAt = max(s.quietAt, after(t, q.Window))
	}
	s.seq++
	return s.latestID()
}

// latestID is the ID of the state's latest reservation: its generation
// above, a count below (after 2^32 reservations an ID repeats, by when the
// reservation it first named is long gone).
func (s *keyState) latestID() uint64 { return uint64(s.gen)<<32 | uint64(s.seq) }

// cancel gives back reservation id, which started at start: the latest
// reservation is undone exactly; an older one returns its token and its
// quota slots, but the min-delay chain built on it stays. A reservation
// of an earlier state of the key (another generation) is ignored: the key
// was dropped after it, so it no longer counts.
func (s *keyState) cancel(id uint64, start int64, rule *Rule) {
	if uint32(id>>32) != s.gen {
		return
	}
	if id == s.latestID() && s.undo.valid {
		u := s.undo
		s.used, s.tokens, s.tokensAt, s.last, s.hasLast = u.used, u.tokens, u.tokensAt, u.last, u.hasLast
		s.quietAt = max(u.quietAt, s.pausedUntil)
		for i := range s.windows {
			s.windows[i].pop()
		}
		s.undo.valid = false
		return
	}
	if rule.Rate > 0 && s.used {
		s.tokens = math.Min(float64(rule.Burst), s.tokens+1)
		// The token stays given back if the latest reservation is undone.
		s.undo.tokens = math.Min(float64(rule.Burst), s.undo.tokens+1)
	}
	for i := range s.windows {
		s.windows[i].remove(start)
	}
}

// pause makes nothing start before until.
func (s *keyState) pause(until int64) {
	s.pausedUntil = max(s.pausedUntil, until)
	s.quietAt = max(s.quietAt, until)
}

// state reports the key at now, claiming nothing.
func (s *keyState) state(now int64, rule *Rule) State {
	t, reason := s.earliest(now, rule, 0)
	st := State{Wait: time.Duration(t - now), Reason: reason}
	if s.pausedUntil > now {
		st.Paused = time.Duration(s.pausedUntil - now)
	}
	for i, q := range rule.Quotas {
		w := &s.windows[i]
		qs := QuotaState{Remaining: q.Requests}
		for j := 0; j < w.n; j++ {
			start := w.at(j)
			if start+int64(q.Window) <= now {
				continue
			}
			if qs.Remaining == q.Requests {
				qs.NextFree = time.Duration(start + int64(q.Window) - now)
			}
			qs.Remaining--
		}
		st.Quotas = append(st.Quotas, qs)
	}
	return st
}

// at returns the j-th oldest start in the window.
func (w *window) at(j int) int64 { return w.starts[(w.head+j)%len(w.starts)] }

func (w *window) push(t int64) {
	w.pushedLast = true
	w.wasFull = w.n == len(w.starts)
	if w.wasFull {
		w.evicted = w.starts[w.head]
		w.starts[w.head] = t
		w.head = (w.head + 1) % len(w.starts)
		return
	}
	w.starts[(w.head+w.n)%len(w.starts)] = t
	w.n++
}

// pop undoes the latest push, also after removes: the latest start is
// still the newest, and the one it evicted goes back before the oldest.
func (w *window) pop() {
	if !w.pushedLast {
		return
	}
	w.pushedLast = false
	w.n--
	if w.wasFull {
		w.head = (w.head - 1 + len(w.starts)) % len(w.starts)
		w.starts[w.head] = w.evicted
		w.n++
	}
}

// remove deletes one start equal to t, keeping the others in order.
func (w *window) remove(t int64) {
	for j := w.n - 1; j >= 0; j-- {
		if w.at(j) != t {
			continue
		}
		for k := j; k < w.n-1; k++ {
			w.starts[(w.head+k)%len(w.starts)] = w.at(k + 1)
		}
		w.n--
		return
	}
}
