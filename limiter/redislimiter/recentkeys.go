package redislimiter

// recentKeys maps the domains of a handoff shard to their ownPace,
// ordered from the least to the most recently used, so that trim looks at
// the entries least likely to be needed again. Each domain added costs
// one allocation, which holds the domain, its pace and the links of the
// order.
//
// The zero recentKeys is empty and ready to use. It is not safe for
// concurrent use: its shard's lock guards it.
type recentKeys struct {
	m      map[string]*recentKey
	newest *recentKey // the most recently used; nil when empty
	oldest *recentKey // the least recently used; nil when empty
}

// recentKey is one domain of a recentKeys. Its value stays at the same
// address while the domain is in the map, so a caller may keep a pointer
// to it.
type recentKey struct {
	key          string
	value        ownPace
	newer, older *recentKey
}

// get returns key's entry, now the most recently used, or nil.
func (r *recentKeys) get(key string) *recentKey {
	e := r.m[key]
	if e != nil && r.newest != e {
		r.unlink(e)
		r.pushNewest(e)
	}
	return e
}

// add stores key, which r must not hold, with a zero value as the most
// recently used, and returns its entry.
func (r *recentKeys) add(key string) *recentKey {
	if r.m == nil {
		r.m = make(map[string]*recentKey)
	}
	e := &recentKey{key: key}
	r.m[key] = e
	r.pushNewest(e)
	return e
}

// trim looks at up to look of the least recently used entries: those that
// mayGo accepts are removed, the others made the most recently used, so
// that the next trim looks past them.
func (r *recentKeys) trim(look int, mayGo func(*ownPace) bool) {
	for ; look > 0 && r.oldest != nil; look-- {
		e := r.oldest
		r.unlink(e)
		if mayGo(&e.value) {
			delete(r.m, e.key)
		} else {
			r.pushNewest(e)
		}
	}
}

func (r *recentKeys) unlink(e *recentKey) {
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		r.newest = e.older
	}
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		r.oldest = e.newer
	}
	e.newer, e.older = nil, nil
}

func (r *recentKeys) pushNewest(e *recentKey) {
	e.older = r.newest
	if r.newest != nil {
		r.newest.newer = e
	} else {
		r.oldest = e
	}
	r.newest = e
}
