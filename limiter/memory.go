package limiter

import (
	"context"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"
)

const shardCount = 32

// Memory is a Limiter that keeps every key's state in this process,
// measured on its monotonic clock. The zero value is not usable; call
// NewMemory.
//
// Memory stays bounded however many keys it meets: a key's state is dropped
// once all its rules have recovered (its bucket is full again, its min
// delay, pause and quota windows are over), when forgetting it changes
// nothing. Each of its shards sweeps such keys whenever it has doubled in
// size since its last sweep, so only keys active in the recent past cost
// memory: about 250 bytes each (a 168-byte state and its map entry), plus
// 8 bytes per request a quota allows.
//
// Memory is safe for concurrent use. It never blocks: callers wait.
type Memory struct {
	epoch  time.Time
	seed   maphash.Seed
	gens   atomic.Uint32 // the latest generation given to a key's state
	shards [shardCount]shard
}

// A shard's lock guards its map; each key's state has a lock of its own,
// so that a request for a key, through a Handle, touches no memory that
// requests for other keys write.
type shard struct {
	mu      sync.Mutex
	keys    map[string]*lockedState
	sweepAt int
	_       cpu.CacheLinePad
}

// lockedState is a key's state with its lock, and where it lives.
type lockedState struct {
	mu sync.Mutex
	keyState
	owner   *Memory
	dropped bool // swept from its shard: look the key up again
}

const minSweep = 64

// NewMemory returns an empty in-memory Limiter.
func NewMemory() *Memory {
	m := &Memory{epoch: time.Now(), seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].keys = make(map[string]*lockedState)
		m.shards[i].sweepAt = minSweep
	}
	return m
}

// Reserve implements Limiter at r.Now, or at the current time if r.Now is zero.
func (m *Memory) Reserve(_ context.Context, r Request) (Reservation, error) {
	var res Reservation
	m.ReserveInto(&r, &res)
	return res, nil
}

// ReserveAt is Reserve at time now (the current time if now is zero).
func (m *Memory) ReserveAt(r Request, now time.Time) Reservation {
	r.Now = now
	var res Reservation
	m.ReserveInto(&r, &res)
	return res
}

// ReserveInto is Reserve for callers on a hot path: it reads r and writes
// the reservation into res, copying neither. (The Transport calls it for
// every request: passing a Request and a Reservation by value through the
// Limiter interface cost about as much as the decision itself.)
func (m *Memory) ReserveInto(r *Request, res *Reservation) {
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	var jitter time.Duration
	if r.Rule.Jitter > 0 {
		jitter = rand.N(r.Rule.Jitter)
	}
	n := m.nanos(now)
	s := m.lockState(r.Key, r.Handle, n)
	defer s.mu.Unlock()
	s.fitWindows(&r.Rule)
	t, reason := s.earliest(n, &r.Rule, jitter)
	wait := time.Duration(t - n)
	res.Wait, res.Reason, res.Degraded = wait, reason, false
	if r.MaxWait > 0 && wait > r.MaxWait {
		res.OK, res.ID, res.Start = false, 0, 0
		return
	}
	res.OK, res.ID, res.Start = true, s.commit(t, &r.Rule), t
}

// Cancel implements Limiter.
func (m *Memory) Cancel(_ context.Context, r Request, res Reservation) error {
	if !res.OK {
		return nil
	}
	if s := m.lockExisting(r.Key); s != nil {
		s.cancel(res.ID, res.Start, &r.Rule)
		s.mu.Unlock()
	}
	return nil
}

// Pause implements Limiter on the current time.
func (m *Memory) Pause(_ context.Context, key string, d time.Duration) error {
	m.PauseAt(key, d, time.Now())
	return nil
}

// PauseAt is Pause at time now.
func (m *Memory) PauseAt(key string, d time.Duration, now time.Time) {
	n := m.nanos(now)
	s := m.lockState(key, nil, n)
	defer s.mu.Unlock()
	s.pause(after(n, d))
}

// State implements Limiter on the current time.
func (m *Memory) State(_ context.Context, key string, rule Rule) (State, error) {
	return m.StateAt(key, rule, time.Now()), nil
}

// StateAt is State at time now.
func (m *Memory) StateAt(key string, rule Rule, now time.Time) State {
	n := m.nanos(now)
	s := m.lockExisting(key)
	if s == nil {
		return newKeyState(rule).state(n, &rule)
	}
	defer s.mu.Unlock()
	s.fitWindows(&rule)
	return s.state(n, &rule)
}

// Len reports how many keys the limiter tracks now.
func (m *Memory) Len() int {
	total := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		total += len(sh.keys)
		sh.mu.Unlock()
	}
	return total
}

func (m *Memory) nanos(t time.Time) int64 { return int64(t.Sub(m.epoch)) }

// lockState finds or creates key's state and locks it; the caller unlocks
// it. A handle bound to a live state of this limiter saves the lookup;
// otherwise the state found is bound to the handle.
func (m *Memory) lockState(key string, h *Handle, now int64) *lockedState {
	if h != nil {
		if s := h.state.Load(); s != nil && s.owner == m {
			s.mu.Lock()
			if !s.dropped {
				return s
			}
			s.mu.Unlock()
		}
	}
	for {
		sh := m.shard(key)
		sh.mu.Lock()
		s := sh.keys[key]
		if s == nil {
			if len(sh.keys) >= sh.sweepAt {
				sh.sweepLocked(now)
			}
			s = &lockedState{keyState: *newKeyState(Rule{}), owner: m}
			s.gen = m.gens.Add(1)
			sh.keys[key] = s
		}
		sh.mu.Unlock()
		s.mu.Lock()
		if !s.dropped {
			if h != nil {
				h.state.Store(s)
			}
			return s
		}
		s.mu.Unlock() // swept between the two locks: look again
	}
}

// lockExisting finds key's state and locks it, or returns nil if the key
// has none.
func (m *Memory) lockExisting(key string) *lockedState {
	for {
		sh := m.shard(key)
		sh.mu.Lock()
		s := sh.keys[key]
		sh.mu.Unlock()
		if s == nil {
			return nil
		}
		s.mu.Lock()
		if !s.dropped {
			return s
		}
		s.mu.Unlock()
	}
}

func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)%shardCount]
}

// sweepLocked drops the shard's quiet keys. A key busy under its own lock
// is not quiet, so it is skipped rather than waited for.
func (sh *shard) sweepLocked(now int64) {
	for key, s := range sh.keys {
		if !s.mu.TryLock() {
			continue
		}
		if s.quietAt <= now {
			s.dropped = true
			delete(sh.keys, key)
		}
		s.mu.Unlock()
	}
	sh.sweepAt = max(minSweep, 2*len(sh.keys))
}
