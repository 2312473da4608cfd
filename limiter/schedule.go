package limiter

import (
	"math"
	"time"
)

// keyState is everything a limiter remembers of one key. Times are
// nanoseconds on the limiter's clock. Starts never go backwards: a new
// reservation starts no earlier than the latest one, which keeps each
// quota's window a queue and lets the bucket be read only forward in time.
type keyState struct {
	tokens      float64 // bucket tokens at tokensAt, if used; full otherwise
	tokensAt    int64
	used        bool
	last        int64 // start of the latest reservation, if hasLast
	hasLast     bool
	pausedUntil int64
	quietAt     int64 // from then on the state is as good as a fresh one
	windows     []window
	seq         uint64
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
	s := &keyState{}
	s.fitWindows(rule)
	return s
}

// fitWindows makes one window per quota of rule, keeping the history of
// those that did not change.
func (s *keyState) fitWindows(rule Rule) {
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
func (s *keyState) tokensAtTime(t int64, rule Rule) float64 {
	if !s.used {
		return float64(rule.Burst)
	}
	return math.Min(float64(rule.Burst), s.tokens+float64(t-s.tokensAt)*rule.Rate/1e9)
}

// earliest returns the earliest start at or after now that every rule
// allows, with jitter added to the gap since the latest start, and the
// rule that set it.
func (s *keyState) earliest(now int64, rule Rule, jitter time.Duration) (int64, string) {
	t, reason := now, ""
	later := func(u int64, why string) {
		if u > t {
			t, reason = u, why
		}
	}
	if s.hasLast {
		later(s.last, ReasonQueue)
		if rule.MinDelay > 0 {
			later(s.last+int64(rule.MinDelay), ReasonMinDelay)
		}
	}
	later(s.pausedUntil, ReasonPause)
	for i, q := range rule.Quotas {
		if w := &s.windows[i]; w.n == len(w.starts) {
			later(w.starts[w.head]+int64(q.Window), ReasonQuota)
		}
	}
	if rule.Rate > 0 {
		if missing := 1 - s.tokensAtTime(t, rule); missing > 0 {
			later(t+int64(math.Ceil(missing*1e9/rule.Rate)), ReasonRate)
		}
	}
	if s.hasLast && jitter > 0 {
		if t > now {
			t += int64(jitter)
		} else {
			later(s.last+int64(jitter), ReasonJitter)
		}
	}
	return t, reason
}

// commit claims start t, which earliest returned, and returns its ID.
func (s *keyState) commit(t int64, rule Rule) uint64 {
	s.undo = undo{true, s.used, s.tokens, s.tokensAt, s.last, s.hasLast, s.quietAt}
	s.quietAt = max(s.quietAt, t+int64(rule.MinDelay+rule.Jitter))
	if rule.Rate > 0 {
		s.tokens = s.tokensAtTime(t, rule) - 1
		s.tokensAt, s.used = t, true
		refill := (float64(rule.Burst) - s.tokens) * 1e9 / rule.Rate
		s.quietAt = max(s.quietAt, t+int64(math.Ceil(refill)))
	}
	s.last, s.hasLast = t, true
	for i, q := range rule.Quotas {
		s.windows[i].push(t)
		s.quietAt = max(s.quietAt, t+int64(q.Window))
	}
	s.seq++
	return s.seq
}

// cancel gives back reservation id, which started at start: the latest
// reservation is undone exactly; an older one returns its token and its
// quota slots, but the min-delay chain built on it stays.
func (s *keyState) cancel(id uint64, start int64, rule Rule) {
	if id == s.seq && s.undo.valid {
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
func (s *keyState) state(now int64, rule Rule) State {
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

// pop undoes the latest push.
func (w *window) pop() {
	if !w.pushedLast {
		return
	}
	w.pushedLast = false
	if w.wasFull {
		w.head = (w.head - 1 + len(w.starts)) % len(w.starts)
		w.starts[w.head] = w.evicted
		return
	}
	w.n--
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
		w.pushedLast = false
		return
	}
}
