package polite

import "sync"

// domainMap is a sync.Map from keys to domains. Its reads write no
// shared memory, so goroutines looking domains up at once do not slow each
// other down, which a map behind a lock cannot offer.
type domainMap struct{ m sync.Map }

func (dm *domainMap) Load(key string) (*domain, bool) {
	v, ok := dm.m.Load(key)
	if !ok {
		return nil, false
	}
	return v.(*domain), true
}

func (dm *domainMap) LoadOrStore(key string, d *domain) (*domain, bool) {
	v, loaded := dm.m.LoadOrStore(key, d)
	return v.(*domain), loaded
}

func (dm *domainMap) CompareAndDelete(key string, d *domain) bool {
	return dm.m.CompareAndDelete(key, d)
}

func (dm *domainMap) Values() []*domain {
	var out []*domain
	dm.m.Range(func(_, v any) bool {
		out = append(out, v.(*domain))
		return true
	})
	return out
}
