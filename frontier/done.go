package frontier

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/polite-go/polite"
)

// Done reports the answer to req, a request Next returned: resp and err as
// the http.Client or the Transport returned them. It reports whether the
// answer is final. An answer that asks to come back (see Retryable) puts
// the request pushed back at the end of its domain's line, for its
// domain's next turn, up to WithRetries times, and Done returns false:
// close resp's body, if any, and take the next request. A request whose
// host's robots.txt could not be fetched goes back no sooner than the
// polite.WaitError's RetryAt; one with a body goes back only if its
// GetBody can make the body anew. Once the Transport gives the domain up
// (polite.WithMaxErrors), its requests left in line are handed out at once,
// for the Transport to refuse.
//
// Done on a request Next did not return, or a second time, does nothing
// and reports true.
func (f *Frontier) Done(req *http.Request, resp *http.Response, err error) bool {
	fl, _ := req.Context().Value(flightKey{}).(*flight)
	if fl == nil || fl.f != f {
		return true
	}
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	again := Retryable(status, err)
	givenUp := errors.Is(err, polite.ErrGivenUp) || again && f.t.GivenUp(fl.d.key) != nil
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl.reported {
		return true
	}
	fl.reported = true
	now := time.Now()
	if givenUp {
		f.giveUpLocked(fl.d.key, now)
	}
	e := fl.entry
	if !again || givenUp || e.attempt > f.retries || e.req.Body != nil && e.req.GetBody == nil {
		f.answeredLocked()
		return true
	}
	var notBefore time.Time
	var we *polite.WaitError
	if errors.Is(err, polite.ErrRobotsUnreachable) && errors.As(err, &we) {
		notBefore = we.RetryAt
	}
	if e.req.Body != nil {
		body, err := e.req.GetBody()
		if err != nil {
			f.answeredLocked()
			return true
		}
		e.req = e.req.Clone(e.req.Context())
		e.req.Body = body
	}
	e.attempt++
	f.queueLocked(fl.d.key, e, false, notBefore)
	return false
}

// giveUpLocked notes that the Transport gave key's domain up: its
// requests left are handed out at once.
func (f *Frontier) giveUpLocked(key string, now time.Time) {
	d, ok := f.domains[key]
	if !ok || d.givenUp {
		return
	}
	d.giveUp(now)
	if d.where == inReady {
		f.ready.fix(d)
	}
	f.notifyLocked(now)
}

// answeredLocked counts a request's final answer.
func (f *Frontier) answeredLocked() {
	f.outstanding--
	if f.outstanding > 0 {
		return
	}
	if f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.notifyLocked(time.Now()) // Next may return io.EOF now
}

// Wait blocks until every request pushed has a final answer reported by
// Done (or was dropped as a duplicate), or until ctx ends, and returns
// ctx's error then. With nothing pushed, or everything answered, it
// returns nil at once; a request pushed later counts again. Use it to
// Close the Frontier once a crawl is done, instead of counting requests
// by hand; it waits forever for a request handed out whose answer Done is
// not told.
func (f *Frontier) Wait(ctx context.Context) error {
	f.mu.Lock()
	if f.outstanding == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
