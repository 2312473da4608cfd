// Package shardmap provides a string-keyed map split into padded shards,
// for lookups that many goroutines make at once.
package shardmap

import (
	"hash/maphash"
	"sync"

	"golang.org/x/sys/cpu"
)

const shardCount = 64

// Map is a map from strings to V, safe for concurrent use. Each shard has
// its own lock on its own cache line, so lookups of different keys rarely
// contend. The zero Map is ready to use.
type Map[V any] struct {
	once   sync.Once
	seed   maphash.Seed
	shards [shardCount]shard[V]
}

type shard[V any] struct {
	mu sync.RWMutex
	m  map[string]V
	_  cpu.CacheLinePad
}

func (m *Map[V]) shard(key string) *shard[V] {
	m.once.Do(func() { m.seed = maphash.MakeSeed() })
	return &m.shards[maphash.String(m.seed, key)%shardCount]
}

// Load returns the value stored for key, if any.
func (m *Map[V]) Load(key string) (V, bool) {
	sh := m.shard(key)
	sh.mu.RLock()
	v, ok := sh.m[key]
	sh.mu.RUnlock()
	return v, ok
}

// LoadOrStore returns the value stored for key if there is one, and
// otherwise stores and returns v; loaded says which.
func (m *Map[V]) LoadOrStore(key string, v V) (actual V, loaded bool) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old, ok := sh.m[key]; ok {
		return old, true
	}
	if sh.m == nil {
		sh.m = make(map[string]V)
	}
	sh.m[key] = v
	return v, false
}

// Store sets the value for key.
func (m *Map[V]) Store(key string, v V) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil {
		sh.m = make(map[string]V)
	}
	sh.m[key] = v
}

// DeleteIf deletes key if keep, called with its value under the shard's
// lock, returns false; it reports whether it deleted.
func (m *Map[V]) DeleteIf(key string, keep func(V) bool) bool {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	v, ok := sh.m[key]
	if !ok || keep(v) {
		return false
	}
	delete(sh.m, key)
	return true
}

// Values returns every value, shard by shard; it sees each shard at one
// moment, not the whole map.
func (m *Map[V]) Values() []V {
	var out []V
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.RLock()
		for _, v := range sh.m {
			out = append(out, v)
		}
		sh.mu.RUnlock()
	}
	return out
}

// Clear deletes every key.
func (m *Map[V]) Clear() {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		clear(sh.m)
		sh.mu.Unlock()
	}
}
