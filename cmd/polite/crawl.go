package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
)

// result is what one attempt at a target came to.
type result struct {
	target
	attempt int           // 1 for the first
	sent    bool          // the request left the Transport's wait
	status  int           // 0 without a response
	bytes   int64         // body bytes read
	file    string        // where the body was saved, relative to -out
	elapsed time.Duration // from the hand-out to the end of the body
	waited  time.Duration // of that, before the request went: robots.txt, its turn
	req     *http.Request // as the frontier handed it out
	err     error         // nil when the attempt got a whole response
	saving  bool          // err is the saver's: the answer came, the disk failed
	at      time.Duration // since the crawl's start, when it ended
}

// crawl fetches a list of targets through a polite Transport with a pool
// of workers, which take them from a frontier: a free worker gets the URL
// of the domain whose turn comes soonest, and no domain occupies more than
// its share of the workers while others have URLs left. An answer that
// asks the client to come back (see comeBack) puts its URL back in the
// frontier, where it waits for its domain's next turn.
type crawl struct {
	client      *http.Client // its Transport is transport
	transport   *polite.Transport
	concurrency int
	userAgent   string
	saver       *saver // nil: bodies are read and dropped
	display     display
	retries     int           // attempts after the first for a URL asked to come back
	maxWait     time.Duration // the longest wait for a turn; 0: none
	maxErrors   int           // failed answers in a row that give a domain up (-max-errors); 0: never
	maxPause    time.Duration // the longest pause a server can impose (-max-pause)

	start   time.Time
	recent  recentKeys
	figures figures
	eta     etaCache

	mu     sync.Mutex                   // guards what follows
	live   map[*attempt]struct{}        // made and not yet settled
	queued map[string]map[*attempt]bool // in the frontier, by key
}

// grace is how long requests already sent may go on after the crawl is
// stopped, before they are cancelled.
const grace = 5 * time.Second

// attempt is the tries at fetching a target: the frontier puts its
// request back in line for each try after the first.
type attempt struct {
	t      *target
	n      int          // the try: 1 for the first
	sent   atomic.Bool  // the request of this try left the Transport's wait
	sentAt atomic.Int64 // when, in Unix nanoseconds
	cancel context.CancelFunc
}

// attemptKey is the context key under which a request carries its attempt.
type attemptKey struct{}

// summary is what a crawl came to.
type summary struct {
	total      int
	fetched    int // URLs that got a final answer
	retried    int // of those, the URLs tried more than once
	failed     int // URLs that ended without a final answer
	notStarted int // URLs never sent because the crawl was stopped
	duplicates int // URLs dropped, listed before
	elapsed    time.Duration
}

// maxAhead is the most targets a crawl holds at once: read from its
// source and not yet settled. It bounds the crawl's memory, whatever the
// length of its URL list, and how far ahead in the list the frontier
// looks for a domain whose turn has come.
const maxAhead = 10_000

// run fetches every target of src and says what came of them. When ctx
// ends, no new request starts and no more targets are read; requests
// already sent get the grace period to end.
func (c *crawl) run(ctx context.Context, src source) summary {
	c.start = time.Now()
	c.live = make(map[*attempt]struct{})
	c.queued = make(map[string]map[*attempt]bool)
	var s summary

	// workers ends the workers' Next calls: at the stop, or once every
	// target is settled while some request is still in the frontier.
	workers, endWorkers := context.WithCancel(context.Background())
	defer endWorkers()
	defer context.AfterFunc(ctx, func() {
		endWorkers()
		c.stop()
	})()

	q := frontier.New(c.transport, frontier.WithRetries(c.retries))
	c.display.start(src.total(), c.status)
	room := make(chan struct{}, maxAhead) // a place for each target held
	fed := make(chan target)
	go feed(ctx, src, room, fed)

	results := make(chan result)
	var wg sync.WaitGroup
	workerCount := c.concurrency
	if n := src.total(); n >= 0 {
		workerCount = min(workerCount, max(n, 1))
	}
	for range workerCount {
		wg.Go(func() {
			for req, err := q.Next(workers); err == nil; req, err = q.Next(workers) {
				a := req.Context().Value(attemptKey{}).(*attempt)
				if !c.handOut(a, a.t.key) {
					q.Done(req, nil, context.Canceled) // settled while in line
					continue
				}
				c.recent.taken(a.t.key)
				results <- c.fetch(req, a)
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	left := 0 // targets held and not settled
	settled := func(n int) {
		left -= n
		for range n {
			<-room
		}
	}
	stopped := ctx.Done()
	for results != nil && (fed != nil || left > 0) {
		select {
		case <-stopped:
			stopped, fed = nil, nil // the feeder stops too
		case t, ok := <-fed:
			if !ok {
				fed = nil
				continue
			}
			s.total++
			if c.begin(q, t, &s) {
				left++
			} else if t.err == nil {
				<-room // the place feed took for it
			}
		case r, ok := <-results:
			if !ok {
				results = nil
				continue
			}
			if c.next(ctx, q, r, &s) {
				c.recent.done(r.key)
				settled(1)
			}
			settled(c.checkWait(r.key, &s))
		}
	}
	q.Close()
	endWorkers() // what is left in q was settled: not to be waited for
	if results != nil {
		for r := range results { // only after the stop: requests in flight ending
			c.next(ctx, q, r, &s)
		}
	}
	if n := src.total(); n >= 0 {
		s.total = n // those not read before the stop are not started
	}
	s.notStarted = s.total - s.fetched - s.failed - s.duplicates // each settled target is one or the other
	s.elapsed = time.Since(c.start)
	c.display.finish()
	return s
}

// feed sends src's targets to fed, each usable one once room has a place
// for it, until src or ctx ends; then it closes fed.
func feed(ctx context.Context, src source, room chan<- struct{}, fed chan<- target) {
	defer close(fed)
	for ctx.Err() == nil {
		t, ok := src.next()
		if !ok {
			return
		}
		if t.err == nil {
			select {
			case room <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
		select {
		case fed <- t:
		case <-ctx.Done():
			return
		}
	}
}

// begin pushes t's first attempt, and reports whether it was pushed; if
// not, t is settled as failed. A target whose domain the crawl does not
// wait for (see passOver) is not pushed, so that the frontier never holds
// more than the targets held. Once pushed, t is the workers' to read.
func (c *crawl) begin(q *frontier.Frontier, t target, s *summary) bool {
	if t.err == nil {
		t.err = c.passOver(t.key)
	}
	if t.err == nil {
		held := t
		err := c.push(q, &held, &attempt{t: &held, n: 1})
		if err == nil {
			c.recent.add(t.key)
			return true
		}
		if errors.Is(err, frontier.ErrDuplicate) {
			s.duplicates++
			return false
		}
		t.err = err
	}
	c.display.done(result{target: t, attempt: 1, err: t.err, at: time.Since(c.start)})
	s.failed++
	return false
}

// next handles the result of an attempt: it reports whether the target is
// settled, or has the frontier put it back in line to come back.
func (c *crawl) next(ctx context.Context, q *frontier.Frontier, r result, s *summary) bool {
	r.at = time.Since(c.start)
	if ctx.Err() != nil && !r.sent {
		return false // stopped before it was sent: not started
	}
	if r.sent {
		c.figures.answered(r.key, comeBack(r) && r.status != http.StatusTooManyRequests)
	}
	if comeBack(r) {
		if err := c.transport.GivenUp(r.key); err != nil {
			r.err = err // this answer gave its domain up
		}
	}
	if comeBack(r) && r.attempt <= c.retries && ctx.Err() == nil {
		at := c.retryAt(r)
		if c.maxWait > 0 && time.Until(at) > c.maxWait {
			r.err = notFetched(r.key, at, c.maxWait)
		} else {
			a := r.req.Context().Value(attemptKey{}).(*attempt)
			c.requeue(a)
			if !q.Done(r.req, r.response(), r.err) { // back in line for its domain's next turn
				c.figures.retried(r.key)
				c.display.retry(r, at)
				return false
			}
			c.unqueue(a) // final after all: its domain was given up
		}
	}
	q.Done(r.req, nil, context.Canceled) // final, whatever the answer: the crawl is done with it
	c.settle(r.req)
	if answered(r) {
		s.fetched++
		if r.attempt > 1 {
			s.retried++
		}
		c.display.done(r)
		return true
	}
	if r.err == nil {
		r.err = fmt.Errorf("still asked to come back (%s) at attempt %d of %d", http.StatusText(r.status), r.attempt, c.retries+1)
	}
	s.failed++
	c.display.done(r)
	return true
}

// answered reports whether r is a final answer: a whole response whose
// status does not ask the client to come back.
func answered(r result) bool {
	return r.err == nil && !frontier.Retryable(r.status, nil)
}

// retryAt is when the URL of r may be tried again: when its robots.txt
// is fetched again, or when its domain may go.
func (c *crawl) retryAt(r result) time.Time {
	var we *polite.WaitError
	if errors.As(r.err, &we) && errors.Is(r.err, polite.ErrRobotsUnreachable) {
		return we.RetryAt
	}
	return time.Now().Add(c.transport.RemainingWait(r.key))
}

// checkWait settles, as not fetched, the queued targets of key when the
// crawl will not wait for its domain (see passOver), and returns how many
// it settled.
func (c *crawl) checkWait(key string, s *summary) int {
	if c.queuedCount(key) == 0 {
		return 0
	}
	why := c.passOver(key)
	if why == nil {
		return 0
	}
	n := 0
	for _, a := range c.takeQueued(key) {
		n++
		s.failed++
		c.recent.done(key)
		c.display.done(result{target: *a.t, attempt: a.n, err: why, at: time.Since(c.start)})
	}
	return n
}

// passOver returns why the crawl does not wait for key's domain, if it
// does not: the domain was given up, or its next turn is further off than
// -max-wait allows.
func (c *crawl) passOver(key string) error {
	if err := c.transport.GivenUp(key); err != nil {
		return err
	}
	if c.maxWait <= 0 {
		return nil
	}
	if wait := c.transport.RemainingWait(key); wait > c.maxWait {
		return notFetched(key, time.Now().Add(wait), c.maxWait)
	}
	return nil
}

// notFetched is the error for a URL whose turn comes at at, past -max-wait.
func notFetched(key string, at time.Time, maxWait time.Duration) error {
	return fmt.Errorf("not fetched: %s's next turn comes at %s (in %s), past -max-wait %s",
		key, at.Format(time.TimeOnly), time.Until(at).Round(time.Second), maxWait)
}

// push makes the request of attempt a at t and queues it in q.
func (c *crawl) push(q *frontier.Frontier, t *target, a *attempt) error {
	req, err := c.request(t, a)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.queueLocked(t.key, a)
	c.mu.Unlock()
	if err := q.Push(req); err != nil {
		c.unqueue(a)
		c.mu.Lock()
		delete(c.live, a)
		c.mu.Unlock()
		a.cancel()
		return err
	}
	return nil
}

// requeue notes that a goes back in line for its next try.
func (c *crawl) requeue(a *attempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a.n++
	a.sent.Store(false)
	c.queueLocked(a.t.key, a)
}

// unqueue notes that a is not in line after all.
func (c *crawl) unqueue(a *attempt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.queued[a.t.key], a)
	if len(c.queued[a.t.key]) == 0 {
		delete(c.queued, a.t.key)
	}
}

// settle ends the attempt req carries: it has its final answer.
func (c *crawl) settle(req *http.Request) {
	a := req.Context().Value(attemptKey{}).(*attempt)
	c.mu.Lock()
	delete(c.live, a)
	c.mu.Unlock()
	a.cancel()
}

// request makes the request of attempt a at t. Its context is the
// attempt's own, not the crawl's, so that the stop can let a request
// already sent end (see stop); it notes when the request leaves the
// Transport's wait.
func (c *crawl) request(t *target, a *attempt) (*http.Request, error) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), attemptKey{}, a))
	a.cancel = cancel
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GetConn: func(string) {
		if a.sent.CompareAndSwap(false, true) {
			a.sentAt.Store(time.Now().UnixNano())
			c.figures.sent(t.key, time.Now())
		}
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url.String(), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	c.mu.Lock()
	c.live[a] = struct{}{}
	c.mu.Unlock()
	return req, nil
}

// queueLocked notes that a, an attempt at a target of key, waits to be
// handed out.
func (c *crawl) queueLocked(key string, a *attempt) {
	if c.queued[key] == nil {
		c.queued[key] = make(map[*attempt]bool)
	}
	c.queued[key][a] = true
}

// handOut notes that the frontier handed a out, and reports whether it is
// to be sent: a settled target's attempt is cancelled instead.
func (c *crawl) handOut(a *attempt, key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.queued[key][a] {
		delete(c.live, a)
		a.cancel()
		return false
	}
	delete(c.queued[key], a)
	if len(c.queued[key]) == 0 {
		delete(c.queued, key)
	}
	return true
}

func (c *crawl) queuedCount(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queued[key])
}

// takeQueued settles the queued attempts of key and returns them.
func (c *crawl) takeQueued(key string) []*attempt {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*attempt
	for a := range c.queued[key] {
		out = append(out, a)
		delete(c.live, a)
		a.cancel()
	}
	delete(c.queued, key)
	return out
}

// stop ends the crawl's attempts: those not sent at once, those sent
// after the grace period.
func (c *crawl) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a := range c.live {
		if a.sent.Load() {
			time.AfterFunc(grace, a.cancel)
			continue
		}
		a.cancel()
	}
}

// fetch sends req, the request of attempt a, and reads (or saves) its
// body.
func (c *crawl) fetch(req *http.Request, a *attempt) result {
	r := result{target: *a.t, attempt: a.n, req: req}
	start := time.Now()
	r.err = c.get(req, &r)
	r.elapsed = time.Since(start)
	r.sent = a.sent.Load()
	if r.sent {
		r.waited = min(max(time.Unix(0, a.sentAt.Load()).Sub(start), 0), r.elapsed)
	}
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
	if c.saver != nil && !frontier.Retryable(r.status, nil) {
		body := &bodyReader{r: resp.Body}
		var err error
		if r.file, r.bytes, err = c.saver.save(r.url, body); err != nil {
			r.saving = !body.failed
			return fmt.Errorf("saving the body: %w", err)
		}
		return nil
	}
	if r.bytes, err = io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	return nil
}

// bodyReader notes whether reading a response's body failed, as apart
// from writing it.
type bodyReader struct {
	r      io.Reader
	failed bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.failed = true
	}
	return n, err
}

// String says in one line what the crawl came to.
func (s summary) String() string {
	line := fmt.Sprintf("%s in %s: %d fetched", plural(s.total, "URL"), s.elapsed.Round(time.Millisecond), s.fetched)
	if s.retried > 0 {
		line += fmt.Sprintf(" (%d after retries)", s.retried)
	}
	line += fmt.Sprintf(", %d failed", s.failed)
	if s.notStarted > 0 {
		line += fmt.Sprintf(", %d not started (stopped)", s.notStarted)
	}
	if s.duplicates > 0 {
		line += fmt.Sprintf("; %s listed before, skipped", plural(s.duplicates, "duplicate"))
	}
	return line
}

// plural is n and noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
