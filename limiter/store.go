package limiter

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/polite-go/polite/internal/lru"
)

// commitInterval is how often a Memory that Persist set up commits what
// changed: a crash loses at most this much of what it promised.
const commitInterval = time.Second

// A StateStore keeps a Memory's keys between processes: each key's state
// as bytes that only Memory reads. [github.com/polite-go/polite/limiter/statefile]
// keeps them in a file. A StateStore is used by one Memory, from one
// goroutine at a time.
type StateStore interface {
	// Load calls restore with each key the store holds and its state,
	// which restore reads only during the call, and removes the keys for
	// which restore returns false. It returns an error wrapping
	// ErrStateDamaged if what it holds cannot be read, restore's errors
	// included; then it changes nothing.
	Load(restore func(key, state []byte) (keep bool, err error)) error
	// Save writes, in one transaction, each key of states with its
	// state, or removes the key if its state is nil.
	Save(states map[string][]byte) error
	// Close releases the store.
	Close() error
}

// ErrStateInUse is the error a StateStore returns, wrapped with what it
// names, when another process (or another Memory) keeps its state there.
var ErrStateInUse = errors.New("limiter: state in use")

// ErrStateDamaged is the error a StateStore returns, wrapped with what it
// names and what is wrong, when the state it holds cannot be read.
var ErrStateDamaged = errors.New("limiter: state damaged")

// Persist keeps m's state in s, so that a restarted process keeps every
// promise the last one made to servers. Call it once, before m is used;
// m takes s over, and closes it on [Memory.Close] or if Persist fails.
// The store holds the keys m holds, so not a key whose pace had
// recovered: after a restart under a stricter rule, such a key's first
// request may go without the new rule's gap from the last one before the
// restart.
//
// It first restores what s holds, and removes from s the keys that have
// recovered since. A store it cannot read is an error wrapping
// [ErrStateDamaged], never a silent fresh start, and m restores nothing.
//
// From then on, about every second and once more on [Memory.Close], m
// saves the keys that changed since its last commit, in one transaction,
// from a goroutine of its own: a request never waits for the store. A
// crash loses at most the last second. A commit that fails (a full disk)
// is tried again with the next one; Close reports it.
func (m *Memory) Persist(s StateStore) error {
	switch {
	case s == nil:
		return errors.New("limiter: Persist: no store")
	case m.persist != nil:
		return errors.New("limiter: Persist: m keeps its state in a store already")
	}
	now := m.sinceEpoch()
	err := s.Load(func(key, state []byte) (bool, error) {
		st, err := m.decodeState(state)
		if err != nil || st.quietAt <= now {
			return false, err
		}
		m.replace(string(key), &st)
		return true, nil
	})
	if err != nil {
		s.Close()
		m.forget() // what it restored
		return err
	}
	st := &store{s: s, stop: make(chan struct{}), done: make(chan struct{})}
	for i := range m.shards {
		m.shards[i].changed = map[string]struct{}{}
	}
	m.persist = st
	go st.run(m)
	return nil
}

// Commit writes now the keys that changed since the last commit. It
// returns the error the write met, if any; the keys it could not write
// are tried again with the next commit. A Memory that Persist did not set
// up has nothing to commit.
func (m *Memory) Commit() error {
	if m.persist == nil {
		return nil
	}
	return m.persist.commit(m)
}

// Close commits what changed one last time and closes the store. It
// returns the first error a commit met since Persist, if any, so that a
// state that could not be written is never taken for a saved one. A
// Memory that Persist did not set up has nothing to close. A Memory may
// still be used after Close, in memory only.
func (m *Memory) Close() error {
	st := m.persist
	if st == nil {
		return nil
	}
	st.once.Do(func() {
		close(st.stop)
		<-st.done
		st.commit(m)
		m.stopNoting()
		if err := st.s.Close(); err != nil {
			st.record(err)
		}
	})
	st.errMu.Lock()
	defer st.errMu.Unlock()
	return st.err
}

// store is the StateStore Persist keeps a Memory's state in, and its
// commits.
type store struct {
	s    StateStore
	stop chan struct{}
	done chan struct{}
	once sync.Once

	commitMu sync.Mutex // one commit at a time

	errMu sync.Mutex
	err   error // the first commit that failed
}

// changedLocked notes that the state of key, one of sh's, changed since
// the last commit.
func (sh *shard) changedLocked(key string) {
	if sh.changed != nil {
		sh.changed[key] = struct{}{}
	}
}

// stopNoting makes m note no more changes, which no commit would write.
func (m *Memory) stopNoting() {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		sh.changed = nil
		sh.mu.Unlock()
	}
}

// forget drops every key m holds.
func (m *Memory) forget() {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		sh.keys = lru.List[string, keyState]{}
		sh.mu.Unlock()
	}
}

func (st *store) run(m *Memory) {
	defer close(st.done)
	ticker := time.NewTicker(commitInterval)
	defer ticker.Stop()
	for {
		select {
		case <-st.stop:
			return
		case <-ticker.C:
			st.commit(m)
		}
	}
}

func (st *store) record(err error) {
	st.errMu.Lock()
	defer st.errMu.Unlock()
	if st.err == nil {
		st.err = err
	}
}

// commit saves the keys that changed in one transaction: each key's
// state as it is now, or its removal if m no longer holds it or it has
// fully recovered. It holds a shard's lock only to encode its states,
// never while it writes.
func (st *store) commit(m *Memory) error {
	st.commitMu.Lock()
	defer st.commitMu.Unlock()
	states := map[string][]byte{} // nil removes the key
	for i := range m.shards {
		m.shards[i].encodeChanged(states)
	}
	if len(states) == 0 {
		return nil
	}
	err := st.s.Save(states)
	if err != nil {
		for _, key := range slices.Collect(maps.Keys(states)) {
			sh := m.shard(key)
			sh.mu.Lock()
			sh.changedLocked(key) // for the next commit
			sh.mu.Unlock()
		}
		err = fmt.Errorf("limiter: commit: %w", err)
		st.record(err)
	}
	return err
}

// encodeChanged adds to states the keys of sh that changed since the last
// commit, each with its state now, or nil if sh no longer holds it or it
// has fully recovered. It holds sh's lock for encodeChunk keys at a time.
func (sh *shard) encodeChanged(states map[string][]byte) {
	sh.mu.Lock()
	keys := slices.Collect(maps.Keys(sh.changed))
	if sh.changed != nil { // nil after Close
		sh.changed = map[string]struct{}{} // not cleared: a cleared map keeps its size, which each commit would walk
	}
	sh.mu.Unlock()
	for chunk := range slices.Chunk(keys, encodeChunk) {
		sh.mu.Lock()
		now := sh.m.sinceEpoch()
		for _, key := range chunk {
			states[key] = nil
			if e := sh.keys.Peek(key); e != nil && e.Value.quietAt > now {
				states[key] = sh.m.encodeState(&e.Value)
			}
		}
		sh.mu.Unlock()
	}
}

// encodeChunk is how many keys a commit encodes under a shard's lock.
const encodeChunk = 256
