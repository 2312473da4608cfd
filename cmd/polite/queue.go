package main

import (
	"container/list"
	"sync"
	"time"
)

// queue hands targets to workers, domain by domain: a free worker takes
// the next URL of the domain whose turn comes soonest, so that workers do
// not all queue up behind one slow domain while others could go now. It
// is safe for concurrent use.
type queue struct {
	wait func(key string) time.Duration // how long a request to key would wait now

	mu      sync.Mutex
	ring    *list.List              // keys with targets left, in turn order
	domains map[string]*queueDomain // by key
}

type queueDomain struct {
	targets []target
	busy    int // targets taken and not done
	elem    *list.Element
}

// scanKeys is how many domains next compares.
const scanKeys = 16

// sameWait is the difference in waits that next treats as none.
const sameWait = 10 * time.Millisecond

func newQueue(targets []target, wait func(key string) time.Duration) *queue {
	q := &queue{wait: wait, ring: list.New(), domains: make(map[string]*queueDomain)}
	for _, t := range targets {
		d, ok := q.domains[t.key]
		if !ok {
			d = &queueDomain{}
			d.elem = q.ring.PushBack(t.key)
			q.domains[t.key] = d
		}
		d.targets = append(d.targets, t)
	}
	return q
}

// next takes the next target, and false when none is left. The caller
// calls done with it when it is finished. It asks for the waits without
// holding the queue's lock: with a shared limiter each is a round trip to
// Redis, and workers must not queue up behind each other's.
func (q *queue) next() (target, bool) {
	for {
		candidates := q.candidates()
		if len(candidates) == 0 {
			return target{}, false
		}
		for i := range candidates {
			c := &candidates[i]
			c.wait = q.wait(c.key)
			if c.wait == 0 && c.busy == 0 {
				candidates = candidates[:i+1]
				break
			}
		}
		if t, ok := q.take(candidates); ok {
			return t, true
		}
		// Other workers took every candidate's last target meanwhile.
	}
}

// candidate is a domain next considers, with how busy it was and how long
// a request to it would wait.
type candidate struct {
	key  string
	busy int
	wait time.Duration
}

// candidates returns the next scanKeys domains in turn order, so that a
// pick costs the same however many domains the list has.
func (q *queue) candidates() []candidate {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []candidate
	for e := q.ring.Front(); e != nil && len(out) < scanKeys; e = e.Next() {
		key := e.Value.(string)
		out = append(out, candidate{key: key, busy: q.domains[key].busy})
	}
	return out
}

// take takes a target of the best candidate that still has one: the
// shortest wait, and of waits within sameWait of each other, the domain
// with the fewest targets being fetched. It returns false if none has one.
func (q *queue) take(candidates []candidate) (target, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var (
		best     *queueDomain
		bestWait time.Duration
	)
	for _, c := range candidates {
		d, ok := q.domains[c.key]
		if !ok || len(d.targets) == 0 {
			continue
		}
		if best == nil || c.wait < bestWait-sameWait || (c.wait < bestWait+sameWait && d.busy < best.busy) {
			best, bestWait = d, c.wait
		}
	}
	if best == nil {
		return target{}, false
	}
	t := best.targets[0]
	best.targets = best.targets[1:]
	best.busy++
	q.ring.Remove(best.elem)
	if len(best.targets) > 0 {
		best.elem = q.ring.PushBack(t.key)
	}
	return t, true
}

// done marks t, taken with next, as finished.
func (q *queue) done(t target) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d := q.domains[t.key]
	d.busy--
	if d.busy == 0 && len(d.targets) == 0 {
		delete(q.domains, t.key)
	}
}

// active returns the keys with targets taken and not done.
func (q *queue) active() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var keys []string
	for key, d := range q.domains {
		if d.busy > 0 {
			keys = append(keys, key)
		}
	}
	return keys
}
