package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
)

// result is what fetching one target came to.
type result struct {
	target
	status  int    // 0 without a response
	bytes   int64  // body bytes read
	file    string // where the body was saved, relative to -out
	elapsed time.Duration
	err     error // nil when the URL got a whole response
}

// crawl fetches a list of targets through a polite Transport with a pool
// of workers, which take them from a frontier: a free worker gets the URL
// of the domain whose turn comes soonest, and no domain holds more than
// its share of the workers while others have URLs left.
type crawl struct {
	client      *http.Client // its Transport is transport
	transport   *polite.Transport
	concurrency int
	userAgent   string
	saver       *saver // nil: bodies are read and dropped
	display     display

	recent recentKeys
}

// targetIndex is the context key under which a request carries the index
// of its target.
type targetIndex struct{}

// run fetches every target and returns how many got no response.
func (c *crawl) run(ctx context.Context, targets []target) int {
	q := frontier.New(c.transport)
	c.display.start(len(targets), c.waiting)
	failed, queued := 0, 0
	for i := range targets {
		t := &targets[i]
		if t.err == nil {
			t.err = c.push(ctx, q, i, t)
		}
		if t.err != nil {
			c.display.done(result{target: *t, err: t.err})
			failed++
			continue
		}
		queued++
		c.recent.add(t.key)
	}
	q.Close()

	taken := make([]bool, len(targets))
	results := make(chan result)
	var wg sync.WaitGroup
	for range min(c.concurrency, max(queued, 1)) {
		wg.Go(func() {
			for req, err := q.Next(ctx); err == nil; req, err = q.Next(ctx) {
				i := req.Context().Value(targetIndex{}).(int)
				taken[i] = true
				c.recent.taken(targets[i].key)
				results <- c.fetch(req, targets[i])
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	for r := range results {
		if r.err != nil {
			failed++
		}
		c.recent.done(r.key)
		c.display.done(r)
	}
	for i, t := range targets { // ctx ended: those never taken fail with it
		if t.err == nil && !taken[i] {
			c.display.done(result{target: t, err: ctx.Err()})
			failed++
		}
	}
	c.display.finish()
	return failed
}

// push queues t, which is targets[i], in q.
func (c *crawl) push(ctx context.Context, q *frontier.Frontier, i int, t *target) error {
	req, err := http.NewRequestWithContext(context.WithValue(ctx, targetIndex{}, i), http.MethodGet, t.url.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", c.userAgent)
	return q.Push(req)
}

// fetch sends req, the request for t, and reads (or saves) its body.
func (c *crawl) fetch(req *http.Request, t target) result {
	r := result{target: t}
	start := time.Now()
	r.err = c.get(req, &r)
	r.elapsed = time.Since(start)
	return r
}

// get sends req and fills in what came back.
func (c *crawl) get(req *http.Request, r *result) error {
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	if c.saver != nil {
		var err error
		if r.file, r.bytes, err = c.saver.save(r.url, resp.Body); err != nil {
			return fmt.Errorf("saving the body: %w", err)
		}
		return nil
	}
	if r.bytes, err = io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	return nil
}

// domainWait is how long a request to one domain would wait now.
type domainWait struct {
	key    string
	wait   time.Duration
	paused string // why the domain is paused, if it is
}

// waiting lists the domains most recently handed out that have targets
// left and that a request would wait for now, longest wait first.
func (c *crawl) waiting() []domainWait {
	var out []domainWait
	for _, key := range c.recent.list() {
		if w := c.transport.RemainingWait(key); w > 0 {
			out = append(out, domainWait{key: key, wait: w})
		}
	}
	slices.SortFunc(out, func(a, b domainWait) int {
		if n := cmp.Compare(b.wait, a.wait); n != 0 {
			return n
		}
		return cmp.Compare(a.key, b.key)
	})
	if len(out) > 0 {
		if s, ok := c.transport.Stats(out[0].key); ok && s.PausedUntil.After(time.Now()) {
			out[0].paused = cmp.Or(string(s.PauseReason), "paused")
		}
	}
	return out
}

// maxRecent is how many domains the display of waits asks about: the
// Transport's answer may be a round trip to Redis.
const maxRecent = 16

// recentKeys remembers the domains most recently handed out that still
// have targets left. It is safe for concurrent use.
type recentKeys struct {
	mu   sync.Mutex
	left map[string]int // targets not done, by key
	keys []string       // most recent first, at most maxRecent
}

// add notes a target of key to fetch.
func (r *recentKeys) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left == nil {
		r.left = make(map[string]int)
	}
	r.left[key]++
}

// taken notes that a target of key was handed out.
func (r *recentKeys) taken(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.Index(r.keys, key); i >= 0 {
		r.keys = slices.Delete(r.keys, i, i+1)
	}
	r.keys = slices.Insert(r.keys, 0, key)
	if len(r.keys) > maxRecent {
		r.keys = r.keys[:maxRecent]
	}
}

// done notes that a target of key is finished.
func (r *recentKeys) done(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left[key]--; r.left[key] <= 0 {
		delete(r.left, key)
	}
}

// list returns the recent keys with targets left.
func (r *recentKeys) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, key := range r.keys {
		if r.left[key] > 0 {
			out = append(out, key)
		}
	}
	return out
}
