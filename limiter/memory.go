package limiter

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/polite-go/polite/internal/feedback"
	"github.com/polite-go/polite/internal/lru"
)

// Memory is a Limiter that keeps every key's state in this process,
// measured on its clock. The zero value is not usable; call NewMemory.
//
// Memory stays bounded however many keys it meets: a key's state may be
// dropped once all its rules have recovered (its bucket is full again, its
// gaps, pause and quota windows are over) and what it observed of its
// server (a backoff step, an adaptive gap) has gone unused for as long again as
// it lasted; a Transport tells it the Crawl-delay again with each request.
// Each new key looks at the two least recently used keys of its shard,
// drops those it may, and reuses the memory of the first it drops, so only
// keys active in the recent past cost memory, and a quota's window 8 bytes
// per start it still holds. It keeps a key's string as the Request gives
// it, without a copy: a key cut from a longer string keeps all of it in
// memory as long as Memory holds the key's state (a Transport's keys are
// copies of their own).
//
// Memory is safe for concurrent use. It never blocks: callers wait.
type Memory struct {
	epoch   time.Time
	seed    maphash.Seed
	shards  [shards]shard
	persist *store // set by Persist

	drawJitter func(bound time.Duration) time.Duration // set by SetJitterSource; nil: at random
}

// shard holds the keys whose hash falls in it, under its lock, so that
// calls for keys of different shards do not wait for each other.
type shard struct {
	mu      sync.Mutex
	keys    lru.List[string, keyState]
	m       *Memory
	changed map[string]struct{} // the keys changed since Persist's last commit
}

// Memory's keys are spread over shards; each new key looks at the look
// least recently used keys of its shard and drops the quiet ones.
const (
	shards = 16
	look   = 2
)

var _ Limiter = (*Memory)(nil)

// NewMemory returns an empty in-memory Limiter.
func NewMemory() *Memory {
	m := &Memory{epoch: time.Now(), seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].m = m
	}
	return m
}

// shard returns the shard of key.
func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)%shards]
}

// Reserve implements Limiter on the current time.
func (m *Memory) Reserve(_ context.Context, r Request) (res Reservation, err error) {
	jitter := m.jitter(r.EffectiveRule())
	sh := m.shard(r.Key)
	sh.mu.Lock()
	sh.reserveLocked(&r, &res, m.sinceEpoch(), jitter)
	sh.mu.Unlock()
	return res, nil
}

// wakeOn gives w to the later turn res holds, for a request that sleeps
// on w until it comes and accepts to wait maxWait from when res was
// reserved (0: any wait), so that a request leaving late before it moves
// its wake-up (see keyState.wakeNext). A request that leaves late before
// the waker is given wakes at its planned turn, and the gate holds it
// back, as without one.
func (m *Memory) wakeOn(res *Reservation, w *waker, maxWait time.Duration) {
	if !res.ok || res.begun || res.state == nil {
		return
	}
	sh := m.shard(res.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if res.state.handedOut(res.id) { // else the key was dropped, its entry taken by another
		res.state.giveWaker(res.id, res.at-int64(res.wait), maxWait, w)
	}
}

// ReserveAt is Reserve at time now.
func (m *Memory) ReserveAt(r Request, now time.Time) (res Reservation) {
	jitter := m.jitter(r.EffectiveRule())
	sh := m.shard(r.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.reserveLocked(&r, &res, m.nanos(now), jitter)
	return res
}

func (sh *shard) reserveLocked(r *Request, res *Reservation, now int64, jitter time.Duration) {
	rule := r.EffectiveRule()
	s := sh.stateLocked(r, now)
	s.reserve(now, rule, jitter, r.MaxWait, res)
	res.turn, res.state, res.key = (*memoryTurn)(sh), s, r.Key
	res.start = sh.m.epoch.Add(time.Duration(res.at))
}

// Observe implements Limiter on the current time.
func (m *Memory) Observe(_ context.Context, r Request, o Observation) (time.Duration, error) {
	sh := m.shard(r.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.observeLocked(&r, &o, time.Now()), nil
}

// ObserveAt is Observe at time now.
func (m *Memory) ObserveAt(r Request, o Observation, now time.Time) time.Duration {
	sh := m.shard(r.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.observeLocked(&r, &o, now)
}

func (sh *shard) observeLocked(r *Request, o *Observation, now time.Time) time.Duration {
	n, rule := sh.m.nanos(now), r.EffectiveRule()
	s := sh.stateLocked(r, n)
	defer func() { s.quietAt = s.quiet(rule, s.minDelay(rule)) }()
	if o.Status == 0 && !o.Failed {
		s.observed().SetCrawlDelay(o.Host, o.CrawlDelay)
		return 0
	}
	v := s.observed().Observe(&feedback.Response{Status: o.Status, Failed: o.Failed, Sent: o.Sent, Latency: o.Latency,
		RetryAfter: o.RetryAfter, RateLimit: o.RateLimit}, now, policyOf(rule))
	if v.Pause > 0 {
		s.pause(after(n, v.Pause), Reason(v.Reason))
	}
	return v.Added
}

// State implements Limiter on the current time.
func (m *Memory) State(_ context.Context, r Request) (State, error) {
	return m.StateAt(r, time.Now()), nil
}

// StateAt is State at time now.
func (m *Memory) StateAt(r Request, now time.Time) State {
	n, rule := m.nanos(now), r.EffectiveRule()
	sh := m.shard(r.Key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.keys.Peek(r.Key); e != nil {
		return e.Value.state(n, rule, now)
	}
	s := newKeyState()
	m.countLastStart(s, &r, n)
	return s.state(n, rule, now)
}

// memoryTurn is the Turn of Memory's reservations: the
// shard of their key.
type memoryTurn shard

// Cancel implements Turn.
func (t *memoryTurn) Cancel(_ context.Context, res *Reservation) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if res.state.handedOut(res.id) {
		res.state.cancel(res.id, res.at, res.rule)
		(*shard)(t).changedLocked(res.key)
	}
	return nil
}

// Confirm implements Turn on the current time, read under the key's lock
// so that the departure it notes is the moment it returns.
//
// A turn that came at once had its departure noted when it was reserved:
// if its request leaves within departSlack of that, Confirm takes no lock.
func (t *memoryTurn) Confirm(_ context.Context, res *Reservation, rule *Rule) (time.Duration, error) {
	if res.begun && time.Since(res.start) <= departSlack {
		return 0, nil
	}
	res.begun = false
	sh := (*shard)(t)
	if rule == nil {
		rule = res.rule
	}
	jitter := sh.m.jitter(rule)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.confirmLocked(res, rule, sh.m.sinceEpoch(), jitter), nil
}

func (sh *shard) confirmLocked(res *Reservation, rule *Rule, now int64, jitter time.Duration) time.Duration {
	if !res.state.handedOut(res.id) {
		return 0 // nothing left to keep it apart from
	}
	wait := res.state.confirm(now, res, rule, jitter)
	sh.changedLocked(res.key)
	res.wait += wait
	res.start = sh.m.epoch.Add(time.Duration(now + int64(wait)))
	return wait
}

func (m *Memory) nanos(t time.Time) int64 { return int64(t.Sub(m.epoch)) }

// sinceEpoch is the current time on m's clock.
func (m *Memory) sinceEpoch() int64 { return int64(time.Since(m.epoch)) }

// stateLocked finds or creates the state of r's key. A new key first
// drops those of the least recently used keys that are quiet at now, and
// takes the entry of the first it drops; its state counts r.LastStart.
// Taking the entry saves an allocation per new key: 12-20% of the CPU per
// request at 1,000 to 1,000,000 domains, serial (benchmarks/ratios 3);
// keeping r.Key, not a copy, one more.
func (sh *shard) stateLocked(r *Request, now int64) *keyState {
	if e := sh.keys.Get(r.Key); e != nil {
		sh.changedLocked(e.Key)
		return &e.Value
	}
	return sh.addLocked(r, now)
}

// addLocked adds the state of r's key, new at now, as stateLocked says.
// It is a function of its own so that the frame of the common path, a
// key already known, stays small.
//
//go:noinline
func (sh *shard) addLocked(r *Request, now int64) *keyState {
	key := r.Key
	var free *lru.Entry[string, keyState]
	sh.keys.Trim(0, look, func(e *lru.Entry[string, keyState]) bool {
		if e.Value.quietAt > now {
			return false
		}
		sh.changedLocked(e.Key)
		e.Value.drop()
		if free == nil {
			free = e
		}
		return true
	})
	var e *lru.Entry[string, keyState]
	if free != nil {
		e = sh.keys.Reuse(free, key)
	} else {
		e = sh.keys.Add(key)
	}
	e.Value.renew()
	sh.m.countLastStart(&e.Value, r, now)
	sh.changedLocked(e.Key)
	return &e.Value
}

// countLastStart counts r.LastStart, when it is set, as a start in s, a
// state just made for r's key at now.
func (m *Memory) countLastStart(s *keyState, r *Request, now int64) {
	if r.LastStart.IsZero() {
		return
	}
	if at := min(m.nanos(r.LastStart), now); at != none {
		rule := r.EffectiveRule()
		s.historyWindow(now, rule) // as fit sets it, so that a quota counts the start
		s.countStart(at, rule)
	}
}

func policyOf(r *Rule) *feedback.Policy {
	return &feedback.Policy{MaxPause: maxPause(r), Adaptive: r.Adaptive, Target: r.Target, Floor: ruleGap(r),
		StartDelay: r.AdaptiveStart, MaxDelay: r.AdaptiveMax, ErrorStatuses: r.ErrorStatuses}
}

func maxPause(r *Rule) time.Duration {
	if r.MaxPause > 0 {
		return r.MaxPause
	}
	return DefaultMaxPause
}

// ruleGap is the gap a Rule sets between two requests: the larger of
// MinDelay and one token of Rate.
func ruleGap(r *Rule) time.Duration {
	p := r.MinDelay
	if r.Rate > 0 {
		p = max(p, tokenTime(1, r.Rate))
	}
	return p
}
