package limiter

import (
	"math"
	"time"

	"github.com/polite-go/polite/internal/feedback"
)

// keyState is everything a limiter remembers of one key. Times are
// nanoseconds on the limiter's clock.
//
// It keeps two schedules. The plan is the turns it has handed out: a new
// turn starts no earlier than the latest one, which keeps each quota's
// window a queue and lets the bucket be read only forward in time. The
// record is when requests really started: a turn whose request starts
// late (a late wake-up, a slow step before it) moves the turns after it,
// since the record is what a server sees, and a request starts only when
// the record allows it too.
type keyState struct {
	// The plan.
	bucket      bucket
	last        int64 // start of the latest turn, if hasLast
	pausedUntil int64
	pauseWhy    Reason // who asked for the pause until pausedUntil
	windows     []window
	undo        undo
	gen         uint32 // tags this state's reservation IDs, told apart from an earlier state's of the key
	seq         uint32 // counts this state's reservations

	// The record.
	sentBucket bucket
	sent       int64  // when the latest request started, if hasSent
	records    uint32 // counts the starts recorded

	// The flags of both, side by side to keep the struct small.
	hasLast, hasSent bool

	quietAt int64 // from then on the state is as good as a fresh one

	fb *feedback.State // what the server taught; nil until it teaches
}

// bucket is a token bucket: tokens at at, if used; full otherwise.
type bucket struct {
	tokens float64
	at     int64
	used   bool
}

// undo holds what the latest turn changed, so that cancelling it
// restores the plan exactly.
type undo struct {
	bucket     bucket
	sentBucket bucket // the record before the turn, if the turn went at once
	last       int64
	quietAt    int64
	sent       int64
	records    uint32 // the count of starts recorded just after it
	valid      bool
	hasLast    bool
	hasSent    bool
	recorded   bool // the turn went at once: it wrote the record
}

func newKeyState() *keyState {
	return &keyState{pausedUntil: math.MinInt64}
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

// level is the bucket's level at t, which must not precede b.at. From the
// nanosecond the bucket counts as full on, it is exactly full, not a
// rounding error short of it, so that a key is as good as fresh at quietAt.
func (b *bucket) level(t int64, rule *Rule) float64 {
	burst := float64(rule.Burst)
	if !b.used {
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

// take takes a token at t and returns when the bucket is full again.
func (b *bucket) take(t int64, rule *Rule) int64 {
	b.tokens = b.level(t, rule) - 1
	b.at, b.used = t, true
	return after(t, tokenTime(float64(rule.Burst)-b.tokens, rule.Rate))
}

// minDelay is the least gap between two starts: the rule's, or what the
// server asked for when that is longer, and the reason for it.
func (s *keyState) minDelay(rule *Rule) (time.Duration, Reason) {
	learned, why := s.fb.MinDelay(adaptiveStart(rule))
	if learned > rule.MinDelay {
		return learned, Reason(why)
	}
	return rule.MinDelay, reasonMinDelay
}

// fitWindows makes one window per quota of rule, keeping the history of
// each window that rule still has: a window is what it counts, its
// requests and its span, wherever it sits in the list. A window read from
// a saved state has no span, and is the quota with its requests.
func (s *keyState) fitWindows(rule *Rule) {
	fits := len(s.windows) == len(rule.Quotas)
	for i := 0; fits && i < len(rule.Quotas); i++ {
		fits = s.windows[i].limit == rule.Quotas[i].Requests && s.windows[i].span == rule.Quotas[i].Window
	}
	if fits {
		return
	}
	old := s.windows
	s.windows = make([]window, len(rule.Quotas))
	for i, q := range rule.Quotas {
		s.windows[i] = window{limit: q.Requests, span: q.Window}
		for j := range old {
			if old[j].limit == q.Requests && (old[j].span == q.Window || old[j].span == 0) {
				s.windows[i], old[j].limit = old[j], 0 // each history goes to one window
				s.windows[i].span = q.Window
				break
			}
		}
	}
}

// earliest returns the earliest start at or after now that every rule of
// the plan allows, with jitter added to the gap since the latest start, and
// the rule that set it.
func (s *keyState) earliest(now int64, rule *Rule, jitter time.Duration) (int64, Reason) {
	t, reason := now, Reason("")
	later := func(u int64, why Reason) {
		if u > t {
			t, reason = u, why
		}
	}
	gap, gapReason := s.minDelay(rule)
	if s.hasLast {
		later(s.last, reasonQueue)
		if gap > 0 {
			later(after(s.last, gap), gapReason)
		}
	}
	later(s.pausedUntil, s.pauseWhy)
	for i, q := range rule.Quotas {
		if w := &s.windows[i]; w.full() {
			later(after(w.oldest(), q.Window), reasonQuota)
		}
	}
	if rule.Rate > 0 {
		later(s.bucket.ready(t, rule), reasonRate)
	}
	if s.hasLast && jitter > 0 {
		if t > now {
			t = after(t, jitter)
		} else {
			later(after(s.last, jitter), reasonJitter)
		}
	}
	return t, reason
}

// recorded is the earliest start at or after now that the record allows:
// what the server has seen must fit the rules too.
func (s *keyState) recorded(now int64, rule *Rule) int64 {
	t := now
	if gap, _ := s.minDelay(rule); s.hasSent && gap > 0 {
		t = max(t, after(s.sent, gap))
	}
	if rule.Rate > 0 {
		t = max(t, s.sentBucket.ready(t, rule))
	}
	return max(t, s.pausedUntil)
}

// reserve claims into res the earliest turn at or after now, unless its
// wait would exceed maxWait (when positive).
func (s *keyState) reserve(now int64, rule *Rule, jitter, maxWait time.Duration, res *Reservation) {
	s.fitWindows(rule)
	quiet := now >= s.quietAt
	if quiet {
		// As good as a fresh state: the turn is now, and both buckets are
		// full, so the record moves as the plan does.
		s.bucket, s.sentBucket = bucket{}, bucket{}
	}
	inStep := quiet || s.inStep()
	t, reason := now, Reason("")
	if !quiet {
		t, reason = s.earliest(now, rule, jitter)
	}
	if t == now && !inStep {
		// Going at once: the record must allow it too.
		if u := s.recorded(now, rule); u > now {
			t, reason = u, reasonQueue
		}
	}
	wait := time.Duration(t - now)
	res.Wait, res.Reason, res.Degraded, res.rule = wait, reason, false, rule
	if maxWait > 0 && wait > maxWait {
		res.OK, res.id, res.at = false, 0, 0
		return
	}
	res.OK, res.id, res.at = true, s.commit(t, now, rule), t
	if t == now {
		if inStep {
			// The turn's start is the record's as it is the plan's: the
			// record took the same token, and the plan's quiet time covers it.
			s.sent, s.hasSent, s.sentBucket = now, true, s.bucket
			s.records++
		} else {
			s.record(now, rule)
		}
		s.undo.recorded, s.undo.records = true, s.records
	}
}

// inStep reports whether the record is the plan: every turn handed out
// started as planned. Then what the plan allows, the record allows, and a
// start at once changes both alike.
func (s *keyState) inStep() bool {
	return s.hasSent == s.hasLast && s.sent == s.last && s.sentBucket == s.bucket
}

// commit claims start t, which earliest returned at now, and returns the
// reservation's ID.
func (s *keyState) commit(t, now int64, rule *Rule) uint64 {
	u := &s.undo // field by field: a composite literal would be copied twice
	u.valid, u.bucket, u.last, u.hasLast, u.quietAt = true, s.bucket, s.last, s.hasLast, s.quietAt
	u.sentBucket, u.sent, u.hasSent, u.recorded, u.records = s.sentBucket, s.sent, s.hasSent, false, 0
	gap, _ := s.minDelay(rule)
	s.quietAt = max(s.quietAt, after(after(t, gap), rule.Jitter))
	if rule.Rate > 0 {
		s.quietAt = max(s.quietAt, s.bucket.take(t, rule))
	}
	for i, q := range rule.Quotas {
		s.windows[i].push(t, now, q.Window)
		s.quietAt = max(s.quietAt, after(t, q.Window))
	}
	s.last, s.hasLast = t, true
	s.seq++
	return s.latestID()
}

// record notes that a request starts at now.
func (s *keyState) record(now int64, rule *Rule) {
	s.sent, s.hasSent = now, true
	s.records++
	gap, _ := s.minDelay(rule)
	s.quietAt = max(s.quietAt, after(now, gap))
	if rule.Rate > 0 {
		s.quietAt = max(s.quietAt, s.sentBucket.take(now, rule))
	}
}

// confirm is Reservation.Turn.Confirm at now for res, a turn of this state.
func (s *keyState) confirm(now int64, res *Reservation, jitter time.Duration) time.Duration {
	if uint32(res.id>>32) != s.gen {
		return 0 // the key was dropped after it: nothing to keep apart from
	}
	rule := res.rule
	if s.pausedUntil > now {
		// Paused after the turn was claimed: the turn is not spent inside
		// the pause, but given back and claimed anew.
		s.cancel(res.id, res.at, rule)
		s.fitWindows(rule)
		t, reason := s.earliest(now, rule, jitter)
		res.Reason, res.id, res.at = reason, s.commit(t, now, rule), t
		return time.Duration(t - now)
	}
	if u := s.recorded(now, rule); u > now {
		return time.Duration(u - now)
	}
	if now > res.at {
		s.slip(res.at, now, rule)
		res.at = now
	}
	s.record(now, rule)
	return 0
}

// slip moves the plan after a turn planned at at whose request starts at
// now, later: the turns after it follow from now.
func (s *keyState) slip(at, now int64, rule *Rule) {
	for i, q := range rule.Quotas {
		s.windows[i].move(at, now)
		s.quietAt = max(s.quietAt, after(now, q.Window))
	}
	if s.last >= now {
		return
	}
	s.last = now
	gap, _ := s.minDelay(rule)
	s.quietAt = max(s.quietAt, after(after(now, gap), rule.Jitter))
	if b := &s.bucket; rule.Rate > 0 && b.used && b.at < now {
		b.at = now // the token was taken at now, not before
		s.quietAt = max(s.quietAt, after(now, tokenTime(float64(rule.Burst)-b.tokens, rule.Rate)))
	}
}

// latestID is the ID of the state's latest reservation: its generation
// above, a count below (after 2^32 reservations an ID repeats, by when the
// reservation it first named is long gone).
func (s *keyState) latestID() uint64 { return uint64(s.gen)<<32 | uint64(s.seq) }

// cancel gives back reservation id, which starts at start. The latest
// turn is undone exactly. An older one frees its quota slots but gives
// nothing back to the bucket or the gaps: the turns after it were planned
// around it, and giving its token back would let a later request go
// sooner than the rules allow after the one before it. A reservation of
// an earlier state of the key (another generation) is ignored.
func (s *keyState) cancel(id uint64, start int64, rule *Rule) {
	if uint32(id>>32) != s.gen {
		return
	}
	if id == s.latestID() && s.undo.valid {
		u := &s.undo
		s.bucket, s.last, s.hasLast = u.bucket, u.last, u.hasLast
		if u.recorded && u.records == s.records {
			// Its start is the latest recorded: no other start is lost.
			s.sentBucket, s.sent, s.hasSent = u.sentBucket, u.sent, u.hasSent
		}
		s.quietAt = max(u.quietAt, s.pausedUntil, s.recordQuiet(rule))
		for i := range s.windows {
			s.windows[i].pop()
		}
		s.undo.valid = false
		return
	}
	for i := range s.windows {
		s.windows[i].remove(start)
	}
}

// recordQuiet is when the record alone is as good as fresh.
func (s *keyState) recordQuiet(rule *Rule) int64 {
	if !s.hasSent {
		return math.MinInt64
	}
	gap, _ := s.minDelay(rule)
	q := after(s.sent, gap)
	if rule.Rate > 0 && s.sentBucket.used {
		q = max(q, after(s.sentBucket.at, tokenTime(float64(rule.Burst)-s.sentBucket.tokens, rule.Rate)))
	}
	return q
}

// taught is what the server taught, made when it first teaches.
func (s *keyState) taught() *feedback.State {
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

// learned keeps the state as long as what the server taught widens its
// gap.
func (s *keyState) learned(now int64, rule *Rule) {
	if gap, _ := s.minDelay(rule); s.hasLast {
		s.quietAt = max(s.quietAt, after(s.last, gap))
	} else {
		s.quietAt = max(s.quietAt, after(now, gap))
	}
}

// setCrawlDelay takes in host's robots.txt Crawl-delay c.
func (s *keyState) setCrawlDelay(now int64, rule *Rule, host string, c time.Duration) {
	if s.taught().SetCrawlDelay(host, c) {
		s.learned(now, rule)
	}
}

// state reports the key at now, claiming nothing.
func (s *keyState) state(now int64, rule *Rule, wall time.Time) State {
	s.fitWindows(rule)
	t, reason := s.earliest(now, rule, 0)
	if u := s.recorded(now, rule); u > t {
		t, reason = u, reasonQueue
	}
	st := State{Wait: time.Duration(t - now), Reason: reason}
	st.MinDelay, _ = s.minDelay(rule)
	if s.pausedUntil > now {
		st.Paused, st.PauseReason = time.Duration(s.pausedUntil-now), s.pauseWhy
	}
	for i, q := range rule.Quotas {
		w := &s.windows[i]
		qs := QuotaState{Limit: q.Requests, Window: q.Window, Remaining: q.Requests}
		for _, start := range w.live() {
			if start+int64(q.Window) <= now {
				continue
			}
			if qs.Remaining == q.Requests {
				qs.NextFree = wall.Add(time.Duration(start + int64(q.Window) - now))
			}
			qs.Remaining--
		}
		st.Quotas = append(st.Quotas, qs)
	}
	return st
}
