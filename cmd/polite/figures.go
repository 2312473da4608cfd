package main

import (
	"sync"
	"time"
)

// figures keeps, per domain, what the crawl itself sees of its requests,
// beside the Transport's stats. It is safe for concurrent use.
type figures struct {
	mu      sync.Mutex
	domains map[string]*domainFigures
}

// domainFigures is what the crawl saw of one domain's requests.
type domainFigures struct {
	retries     int       // attempts put back to come again
	sends       int       // requests that left the Transport's wait
	first, last time.Time // the first and the last of those
	failing     int       // failed answers in a row (5xx, transport failures)
}

func (f *figures) domain(key string) *domainFigures {
	if f.domains == nil {
		f.domains = make(map[string]*domainFigures)
	}
	d := f.domains[key]
	if d == nil {
		d = &domainFigures{}
		f.domains[key] = d
	}
	return d
}

// retried counts a retry of a request to key.
func (f *figures) retried(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.domain(key).retries++
}

// sent notes that a request to key left the Transport's wait at now.
func (f *figures) sent(key string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.domain(key)
	if d.sends == 0 {
		d.first = now
	}
	d.sends++
	d.last = now
}

// answered counts an answer from key's server: failed says whether it
// was a failure that backs the domain off (a 5xx, a transport failure),
// which adds one to its failures in a row; any other answer ends them.
func (f *figures) answered(key string, failed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.domain(key)
	if failed {
		d.failing++
	} else {
		d.failing = 0
	}
}

// get returns a copy of key's figures.
func (f *figures) get(key string) domainFigures {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d := f.domains[key]; d != nil {
		return *d
	}
	return domainFigures{}
}

// rate is the pace the domain's requests went at: the gaps between the
// first and the last, per second; 0 with fewer than two.
func (d domainFigures) rate() float64 {
	span := d.last.Sub(d.first)
	if d.sends < 2 || span <= 0 {
		return 0
	}
	return float64(d.sends-1) / span.Seconds()
}
