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
// of workers.
type crawl struct {
	client      *http.Client // its Transport is transport
	transport   *polite.Transport
	concurrency int
	userAgent   string
	saver       *saver // nil: bodies are read and dropped
	display     display
}

// run fetches every target and returns how many got no response.
func (c *crawl) run(ctx context.Context, targets []target) int {
	var (
		valid  []target
		failed int
	)
	for _, t := range targets {
		if t.err == nil {
			valid = append(valid, t)
		}
	}
	q := newQueue(valid, c.transport.RemainingWait)
	c.display.start(len(targets), func() []domainWait { return c.waiting(q) })
	for _, t := range targets {
		if t.err != nil {
			c.display.done(result{target: t, err: t.err})
			failed++
		}
	}
	results := make(chan result)
	var wg sync.WaitGroup
	for range min(c.concurrency, max(len(valid), 1)) {
		wg.Go(func() {
			for {
				t, ok := q.next()
				if !ok {
					return
				}
				results <- c.fetch(ctx, t)
				q.done(t)
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
		c.display.done(r)
	}
	c.display.finish()
	return failed
}

// fetch gets one target and reads (or saves) its body.
func (c *crawl) fetch(ctx context.Context, t target) result {
	r := result{target: t}
	start := time.Now()
	r.err = c.get(ctx, &r)
	r.elapsed = time.Since(start)
	return r
}

// get sends r's request and fills in what came back.
func (c *crawl) get(ctx context.Context, r *result) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	if c.saver != nil {
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

// waiting lists the domains being fetched that a request would wait for
// now, longest wait first.
func (c *crawl) waiting(q *queue) []domainWait {
	var out []domainWait
	for _, key := range q.active() {
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
