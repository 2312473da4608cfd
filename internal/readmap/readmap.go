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
// pointer. New keys go to a dirty map under a lock, which is merged into a
// new read map once reads have missed as often as an eighth of the keys,
// or the dirty map's size if larger: each key is copied a constant number
// of times on average, and the map costs at most about an eighth more than
// its keys. (This is sync.Map's original design, with string keys, which
// hash faster than sync.Map's interfaces.)
//
// The zero Map is empty and ready to use. A Map is safe for concurrent
// use.
type Map[V any] struct {
	read   atomic.Pointer[map[string]V]
	mu     sync.Mutex
	dirty  map[string]V // the keys not in read
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
	v, ok := m.dirty[key]
	m.missLocked()
	return v, ok
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
	if r := m.read.Load(); r != nil {
		if old, ok := (*r)[key]; ok {
			return old, true // merged in meanwhile
		}
	}
	if old, ok := m.dirty[key]; ok {
		m.missLocked()
		return old, true
	}
	if m.dirty == nil {
		m.dirty = make(map[string]V)
	}
	m.dirty[key] = v
	m.missLocked()
	return v, false
}

// DeleteFunc deletes every key for which del returns true. It calls del
// under the map's lock: del must not use the map.
func (m *Map[V]) DeleteFunc(del func(key string, v V) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mergeLocked(del)
}

// Range calls f for every key and value the map held when Range began, in
// no order, until f returns false. f may use the map.
func (m *Map[V]) Range(f func(key string, v V) bool) {
	m.mu.Lock()
	if len(m.dirty) > 0 {
		m.mergeLocked(nil)
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

// missLocked counts a read that missed the read map, and merges the dirty
// map into it once the misses have paid for the copy.
func (m *Map[V]) missLocked() {
	m.misses++
	if len(m.dirty) == 0 {
		return
	}
	n := 0
	if r := m.read.Load(); r != nil {
		n = len(*r)
	}
	if m.misses >= max(len(m.dirty), n/8) {
		m.mergeLocked(nil)
	}
}

// mergeLocked makes a new read map of the read and dirty maps' keys, but
// those for which del (when not nil) returns true.
func (m *Map[V]) mergeLocked(del func(key string, v V) bool) {
	r := m.read.Load()
	n := len(m.dirty)
	if r != nil {
		n += len(*r)
	}
	merged := make(map[string]V, n)
	if r != nil {
		for k, v := range *r {
			if del == nil || !del(k, v) {
				merged[k] = v
			}
		}
	}
	for k, v := range m.dirty {
		if del == nil || !del(k, v) {
			merged[k] = v
		}
	}
	m.read.Store(&merged)
	m.dirty, m.misses = nil, 0
}
