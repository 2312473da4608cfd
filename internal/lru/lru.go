// Package lru is a map that remembers the order in which its keys were used.
package lru

// List maps keys to values and orders them from the least to the most
// recently used. Each key added costs one allocation, which holds the
// key, the value and the links of the order; Reuse takes an entry removed
// before instead. Trim bounds it.
//
// The zero List is empty and ready to use. A List is not safe for
// concurrent use: its owner locks around it.
type List[K comparable, V any] struct {
	m           map[K]*Entry[K, V]
	front, back *Entry[K, V] // the most and the least recently used; nil when empty
}

// Entry is one key of a List and its value. The value stays at the same
// address while the key is in the List, so a caller may keep a pointer to
// it.
type Entry[K comparable, V any] struct {
	Key        K
	Value      V
	prev, next *Entry[K, V] // the entries used just after and just before it
}

// Len returns how many keys l holds.
func (l *List[K, V]) Len() int { return len(l.m) }

// Get returns key's entry, now the most recently used, or nil.
func (l *List[K, V]) Get(key K) *Entry[K, V] {
	e := l.m[key]
	if e != nil {
		l.toFront(e)
	}
	return e
}

// Peek returns key's entry without changing the order, or nil.
func (l *List[K, V]) Peek(key K) *Entry[K, V] { return l.m[key] }

// Add stores key with a zero value as the most recently used, and returns
// its entry. The key must not be in l.
func (l *List[K, V]) Add(key K) *Entry[K, V] { return l.Reuse(new(Entry[K, V]), key) }

// Reuse stores key in e, an entry that l no longer holds, as the most
// recently used, and returns e. e keeps its value, for the caller to make
// key's: reusing an entry saves the allocation Add makes. The key must not
// be in l.
func (l *List[K, V]) Reuse(e *Entry[K, V], key K) *Entry[K, V] {
	if l.m == nil {
		l.m = make(map[K]*Entry[K, V])
	}
	e.Key = key
	l.m[key] = e
	l.pushFront(e)
	return e
}

// Remove forgets e, an entry of l.
func (l *List[K, V]) Remove(e *Entry[K, V]) {
	delete(l.m, e.Key)
	l.unlink(e)
}

// Trim removes least recently used entries while l holds more than max,
// looking at no more than look entries: an entry that mayGo refuses is
// kept, and moved to the front, so that the next Trim looks past it.
func (l *List[K, V]) Trim(max, look int, mayGo func(*Entry[K, V]) bool) {
	for ; look > 0 && len(l.m) > max; look-- {
		e := l.back
		if mayGo(e) {
			l.Remove(e)
		} else {
			l.toFront(e)
		}
	}
}

// All calls yield for each entry, from the most to the least recently
// used, until it returns false. yield must not change l.
func (l *List[K, V]) All(yield func(*Entry[K, V]) bool) {
	for e := l.front; e != nil; e = e.next {
		if !yield(e) {
			return
		}
	}
}

func (l *List[K, V]) toFront(e *Entry[K, V]) {
	if l.front != e {
		l.unlink(e)
		l.pushFront(e)
	}
}

func (l *List[K, V]) unlink(e *Entry[K, V]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.front = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.back = e.prev
	}
	e.prev, e.next = nil, nil
}

func (l *List[K, V]) pushFront(e *Entry[K, V]) {
	e.next = l.front
	if l.front != nil {
		l.front.prev = e
	} else {
		l.back = e
	}
	l.front = e
}
