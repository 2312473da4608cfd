package main

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func targetsFor(keys ...string) []target {
	var out []target
	for i, k := range keys {
		out = append(out, target{raw: k + "/" + string(rune('a'+i)), key: k})
	}
	return out
}

func TestQueuePicksTheSoonestDomain(t *testing.T) {
	waits := map[string]time.Duration{"slow.test": 5 * time.Second, "fast.test": 0, "mid.test": time.Second}
	q := newQueue(targetsFor("slow.test", "slow.test", "mid.test", "fast.test", "fast.test"),
		func(key string) time.Duration { return waits[key] })

	for _, c := range []struct {
		want string
		then func()
	}{
		{"fast.test", func() { waits["fast.test"] = 2 * time.Second }}, // no wait, nobody busy; then fast.test waits
		{"mid.test", func() {}},  // mid.test now waits least
		{"fast.test", func() {}}, // mid.test has nothing left; fast.test beats slow.test
		{"slow.test", func() {}},
		{"slow.test", func() {}},
	} {
		got, ok := q.next()
		require.True(t, ok)
		assert.Equal(t, c.want, got.key)
		c.then()
	}
	_, ok := q.next()
	assert.False(t, ok, "every target is taken once")
}

func TestQueuePrefersIdleDomainsOnEqualWaits(t *testing.T) {
	waits := map[string]time.Duration{"a.test": 0, "b.test": 0, "c.test": 0}
	q := newQueue(targetsFor("a.test", "a.test", "b.test", "b.test", "c.test"), func(key string) time.Duration { return waits[key] })
	a, _ := q.next()
	b, _ := q.next()
	require.Equal(t, []string{"a.test", "b.test"}, []string{a.key, b.key})
	assert.ElementsMatch(t, []string{"a.test", "b.test"}, q.active())
	q.done(b)
	// a.test is busy; b.test and c.test are idle. Waits within a few
	// milliseconds count as equal, so an idle domain goes first.
	waits["c.test"], waits["b.test"] = 8*time.Millisecond, 5*time.Millisecond
	c, _ := q.next()
	assert.Equal(t, "c.test", c.key)
	// A clearly shorter wait wins over idleness.
	waits["b.test"] = time.Second
	next, _ := q.next()
	assert.Equal(t, "a.test", next.key)
	for _, tg := range []target{a, c, next} {
		q.done(tg)
	}
	last, ok := q.next()
	require.True(t, ok)
	assert.Equal(t, "b.test", last.key)
	q.done(last)
	_, ok = q.next()
	assert.False(t, ok)
	assert.Empty(t, q.active())
	assert.Empty(t, q.domains, "finished domains are forgotten")
}

func TestQueueAsksForWaitsWithoutItsLock(t *testing.T) {
	var q *queue
	q = newQueue(targetsFor("a.test", "b.test"), func(string) time.Duration {
		q.active() // takes the lock: this would never return if next held it
		return 0
	})
	picked := make(chan string)
	go func() {
		for {
			t, ok := q.next()
			if !ok {
				close(picked)
				return
			}
			picked <- t.key
		}
	}()
	var keys []string
	for {
		select {
		case key, ok := <-picked:
			if !ok {
				assert.Equal(t, []string{"a.test", "b.test"}, keys)
				return
			}
			keys = append(keys, key)
		case <-time.After(10 * time.Second):
			t.Fatal("next held the queue's lock while asking for a wait")
		}
	}
}

func TestQueueConcurrentWorkers(t *testing.T) {
	var in []target
	for i := range 500 {
		in = append(in, targetsFor([]string{"a", "b", "c", "d", "e"}[i%5])...)
		in[i].raw = string(rune(i))
	}
	q := newQueue(in, func(string) time.Duration { return 0 })
	var (
		mu  sync.Mutex
		got []string
		wg  sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				tg, ok := q.next()
				if !ok {
					return
				}
				mu.Lock()
				got = append(got, tg.raw)
				mu.Unlock()
				q.done(tg)
			}
		})
	}
	wg.Wait()
	var want []string
	for _, tg := range in {
		want = append(want, tg.raw)
	}
	assert.ElementsMatch(t, want, got)
	assert.Empty(t, q.domains)
}
