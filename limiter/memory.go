package limiter

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite/internal/feedback"
	"github.com/polite-go/polite/internal/readmap"
)

// Memory is a Limiter that keeps every key's state in this process,
// measured on its clock. The zero value is not usable; call NewMemory.
//
// Memory stays bounded however many keys it meets: a key's state is dropped
// once all its rules have recovered (its bucket is full again, its gaps,
// pause and quota windows are over), when forgetting it changes nothing
// but what its server taught it (an adaptive gap, a backoff step; a
// Transport tells it the Crawl-delay again with the next request). A sweep
// drops such keys whenever the number of keys has doubled since the last
// one, so only keys active in the recent past cost memory: about 350 bytes
// each, plus 8 bytes per start that a quota's window still holds.
//
// A call finds its key's state through its Rule when RuleOf made the Rule
// (see Rule), and by a lookup otherwise.
//
// Memory is safe for concurrent use. It never blocks: callers wait.
type Memory struct {
	epoch   time.Time
	keys    readmap.Map[*lockedState]
	count   atomic.Int64
	sweepAt atomic.Int64
	sweep   sync.Mutex
	gens    atomic.Uint32 // the latest generation given to a key's state
	persist *store        // set by Persist
}

// lockedState is a key's state with its lock. It is the Turn of the
// reservations it makes.
type lockedState struct {
	mu sync.Mutex
	keyState
	owner   *Memory
	key     string
	memo    *memo // the latest memo to remember it, which forgets it when it is dropped
	dropped bool  // swept: look the key up again
	dirty   bool  // changed since the last commit to Persist's store
}

// memo remembers the state a Rule last paced, for Memory to find it again
// without a lookup.
type memo struct{ state atomic.Pointer[lockedState] }

// remembered returns the state of key in m that rule's memo holds, or nil.
func (r *Rule) remembered(m *Memory, key string) *lockedState {
	if r.memo == nil {
		return nil
	}
	if s := r.memo.state.Load(); s != nil && s.owner == m && s.key == key {
		return s
	}
	return nil
}

// remember makes rule's memo hold s, which is locked.
func (r *Rule) remember(s *lockedState) {
	if r.memo != nil && r.memo.state.Load() != s {
		r.memo.state.Store(s)
		s.memo = r.memo
	}
}

// drop marks s, which is locked, as swept, so that no memo keeps it.
func (s *lockedState) drop() {
	s.dropped = true
	s.changed()
	if s.memo != nil {
		s.memo.state.CompareAndSwap(s, nil)
	}
}

const minSweep = 1024

var _ Limiter = (*Memory)(nil)

// NewMemory returns an empty in-memory Limiter.
func NewMemory() *Memory {
	m := &Memory{epoch: time.Now()}
	m.sweepAt.Store(minSweep)
	return m
}

// Reserve implements Limiter on the current time.
func (m *Memory) Reserve(_ context.Context, r Request) (res Reservation, err error) {
	// res is named so that reserve fills the result in place, with no copy.
	m.reserve(&r, &res, m.sinceEpoch())
	return res, nil
}

// ReserveAt is Reserve at time now.
func (m *Memory) ReserveAt(r Request, now time.Time) (res Reservation) {
	m.reserve(&r, &res, m.nanos(now))
	return res
}

func (m *Memory) reserve(r *Request, res *Reservation, n int64) {
	rule := r.rule()
	var jitter time.Duration
	if rule.Jitter > 0 {
		jitter = rand.N(rule.Jitter)
	}
	s := m.lockState(r.Key, rule, n)
	defer s.mu.Unlock()
	s.reserve(n, rule, jitter, r.MaxWait, res)
	res.Turn = s
	res.Start = m.epoch.Add(time.Duration(res.at))
}

// Observe implements Limiter on the current time.
func (m *Memory) Observe(_ context.Context, r Request, o Observation) (time.Duration, error) {
	return m.ObserveAt(r, o, time.Now()), nil
}

// ObserveAt is Observe at time now.
func (m *Memory) ObserveAt(r Request, o Observation, now time.Time) time.Duration {
	n := m.nanos(now)
	rule := r.rule()
	s := m.lockState(r.Key, rule, n)
	defer s.mu.Unlock()
	if o.Status == 0 && !o.Failed {
		s.setCrawlDelay(n, rule, o.Host, o.CrawlDelay)
		return 0
	}
	v := s.taught().Observe(&feedback.Response{Status: o.Status, Failed: o.Failed, Sent: o.Sent, Latency: o.Latency,
		RetryAfter: o.RetryAfter, RateLimit: o.RateLimit}, now, policyOf(rule))
	s.learned(n, rule)
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
	n, rule := m.nanos(now), r.rule()
	s := m.lockExisting(r.Key, rule)
	if s == nil {
		return newKeyState().state(n, rule, now)
	}
	defer s.mu.Unlock()
	return s.state(n, rule, now)
}

// Cancel implements Reservation.Turn.
func (s *lockedState) Cancel(_ context.Context, res *Reservation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dropped {
		s.cancel(res.id, res.at, res.rule)
		s.changed()
	}
	return nil
}

// Confirm implements Reservation.Turn on the current time.
func (s *lockedState) Confirm(_ context.Context, res *Reservation) (time.Duration, error) {
	return s.confirmAt(res, s.owner.sinceEpoch()), nil
}

func (s *lockedState) confirmAt(res *Reservation, now int64) time.Duration {
	var jitter time.Duration
	if res.rule.Jitter > 0 {
		jitter = rand.N(res.rule.Jitter)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped {
		return 0
	}
	wait := s.confirm(now, res, jitter)
	s.changed()
	res.Start = s.owner.epoch.Add(time.Duration(now + int64(wait)))
	return wait
}

func (m *Memory) nanos(t time.Time) int64 { return int64(t.Sub(m.epoch)) }

// sinceEpoch is the current time on m's clock: one read of the monotonic
// clock, half the cost of time.Now.
func (m *Memory) sinceEpoch() int64 { return int64(time.Since(m.epoch)) }

// lockState finds or creates key's state and locks it, to change it; the
// caller unlocks it. rule's memo saves the lookup while it holds the state.
func (m *Memory) lockState(key string, rule *Rule, now int64) *lockedState {
	if s := m.lockRemembered(key, rule); s != nil {
		s.changed()
		return s
	}
	for {
		s, ok := m.keys.Load(key)
		if !ok {
			fresh := &lockedState{keyState: *newKeyState(), owner: m, key: key}
			fresh.gen = m.gens.Add(1)
			if s, ok = m.keys.LoadOrStore(key, fresh); !ok {
				if m.count.Add(1) >= m.sweepAt.Load() {
					m.sweepQuiet(now)
				}
			}
		}
		s.mu.Lock()
		if !s.dropped {
			rule.remember(s)
			s.changed()
			return s
		}
		s.mu.Unlock() // swept between the lookup and the lock: look again
	}
}

// lockExisting finds key's state and locks it, or returns nil if the key
// has none.
func (m *Memory) lockExisting(key string, rule *Rule) *lockedState {
	if s := m.lockRemembered(key, rule); s != nil {
		return s
	}
	for {
		s, ok := m.keys.Load(key)
		if !ok {
			return nil
		}
		s.mu.Lock()
		if !s.dropped {
			rule.remember(s)
			return s
		}
		s.mu.Unlock()
	}
}

// lockRemembered locks the state of key that rule's memo holds, if it is
// still m's, or returns nil.
func (m *Memory) lockRemembered(key string, rule *Rule) *lockedState {
	s := rule.remembered(m, key)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if !s.dropped {
		return s
	}
	s.mu.Unlock()
	return nil
}

// sweepQuiet drops the keys that have fully recovered at now. A key busy
// under its own lock is not quiet, so it is skipped rather than waited
// for. Only one sweep runs at a time.
func (m *Memory) sweepQuiet(now int64) {
	if !m.sweep.TryLock() {
		return
	}
	defer m.sweep.Unlock()
	m.keys.DeleteFunc(func(_ string, s *lockedState) bool {
		if !s.mu.TryLock() {
			return false
		}
		defer s.mu.Unlock()
		if s.quietAt > now {
			return false
		}
		s.drop()
		m.count.Add(-1)
		return true
	})
	m.sweepAt.Store(max(minSweep, 2*m.count.Load()))
}

func policyOf(r *Rule) *feedback.Policy {
	return &feedback.Policy{MaxPause: maxPause(r), Adaptive: r.Adaptive, Target: r.Target, Floor: pace(r),
		StartDelay: r.AdaptiveStart, MaxDelay: r.AdaptiveMax, ErrorStatuses: r.ErrorStatuses}
}

// defaultMaxPause is the longest pause a server can impose when the Rule
// does not say.
const defaultMaxPause = 10 * time.Minute

func maxPause(r *Rule) time.Duration {
	if r.MaxPause > 0 {
		return r.MaxPause
	}
	return defaultMaxPause
}

// pace is the gap a Rule sets between two requests: the larger of MinDelay
// and one token of Rate.
func pace(r *Rule) time.Duration {
	p := r.MinDelay
	if r.Rate > 0 {
		p = max(p, tokenTime(1, r.Rate))
	}
	return p
}
