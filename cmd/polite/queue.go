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

// scanKeys is how many domains next compares, so that a pick costs the
// same however many domains the list has.
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
// calls done with it when it is finished.
func (q *queue) next() (target, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var (
		best     *queueDomain
		bestWait time.Duration
	)
	for e, i := q.ring.Front(), 0; e != nil && i < scanKeys; e, i = e.Next(), i+1 {
		key := e.Value.(string)
		d, w := q.domains[key], q.wait(key)
		if best == nil || w < bestWait-sameWait || (w < bestWait+sameWait && d.busy < best.busy) {
			best, bestWait = d, w
		}
		if w == 0 && d.busy == 0 {
			break
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
