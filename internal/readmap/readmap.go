// Package readmap is a map from strings to values for reads that far
// outnumber writes.
package readmap

import (
	"sync"
	"sync/atomic"
)

// Map maps strings to values. A read of a key it has held for a while
// takes no lock and writes no shared memory, so goroutines reading at once
// never slow each other down: it reads an immutable map behind an atomic
// pointer. New keys go to a dirty map under a lock, which holds every key
// and replaces the read map once reads have missed as often as it has
// keys, so each key is copied a constant number of times on average.
// (This is sync.Map's original design, with string keys, which hash
// faster than sync.Map's interfaces.)
//
// The zero Map is empty and ready to use. A Map is safe for concurrent
// use.
type Map[V any] struct {
	read   atomic.Pointer[map[string]V]
	mu     sync.Mutex
	dirty  map[string]V // nil, or every key: read's and the new ones
	misses int
}

// Load returns key's value, and whether the map holds key.
func (m *Map[V]) Load(key string) (V, bool) {
	if r := m.read.Load(); r != nil {
		if v, ok := (*r)[key]; ok {
			return v, true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loadLocked(key)
}

// LoadOrStore returns key's value if the map holds key, and true;
// otherwise it stores v for key and returns v and false.
func (m *Map[V]) LoadOrStore(key string, v V) (V, bool) {
	if r := m.read.Load(); r != nil {
		if old, ok := (*r)[key]; ok {
			return old, true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.loadLocked(key); ok {
		return old, true
	}
	m.dirtyLocked()[key] = v
	return v, false
}

// DeleteFunc deletes every key for which del returns true. It calls del
// under the map's lock: del must not use the map.
func (m *Map[V]) DeleteFunc(del func(key string, v V) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.dirtyLocked()
	for k, v := range d {
		if del(k, v) {
			delete(d, k)
		}
	}
	m.promoteLocked()
}

// Range calls f for every key and value the map held when Range began, in
// no order, until f returns false. f may use the map.
func (m *Map[V]) Range(f func(key string, v V) bool) {
	m.mu.Lock()
	if m.dirty != nil {
		m.promoteLocked()
	}
	r := m.read.Load()
	m.mu.Unlock()
	if r == nil {
		return
	}
	for k, v := range *r {
		if !f(k, v) {
			return
		}
	}
}

// Len returns how many keys the map holds.
func (m *Map[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirty != nil {
		return len(m.dirty)
	}
	if r := m.read.Load(); r != nil {
		return len(*r)
	}
	return 0
}

// loadLocked looks key up past the read map, counting the miss.
func (m *Map[V]) loadLocked(key string) (V, bool) {
	if m.dirty == nil {
		var zero V
		r := m.read.Load()
		if r == nil {
			return zero, false
		}
		v, ok := (*r)[key]
		return v, ok
	}
	v, ok := m.dirty[key]
	m.misses++
	if m.misses >= len(m.dirty) {
		m.promoteLocked()
	}
	return v, ok
}

// dirtyLocked returns the dirty map, made from the read map if there is
// none.
func (m *Map[V]) dirtyLocked() map[string]V {
	if m.dirty == nil {
		r := m.read.Load()
		n := 0
		if r != nil {
			n = len(*r)
		}
		m.dirty = make(map[string]V, n+1)
		if r != nil {
			for k, v := range *r {
				m.dirty[k] = v
			}
		}
	}
	return m.dirty
}

// promoteLocked makes the dirty map the read map.
func (m *Map[V]) promoteLocked() {
	d := m.dirty
	m.read.Store(&d)
	m.dirty, m.misses = nil, 0
}
