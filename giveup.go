package polite

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/polite-go/polite/internal/feedback"
)

// ErrGivenUp is matched by the error for a request refused because its
// domain was given up: its server failed WithMaxErrors answers in a row.
// Such a request is never sent.
var ErrGivenUp = errors.New("polite: domain given up")

// givenUpError is the error for a request refused because its domain was
// given up. It matches ErrGivenUp.
type givenUpError struct {
	domain   string
	failures int
	last     string // the last failed answer
}

func (e *givenUpError) Error() string {
	return fmt.Sprintf("polite: %s: domain given up after %d failed answers in a row (the last: %s)", e.domain, e.failures, e.last)
}

func (e *givenUpError) Is(target error) bool { return target == ErrGivenUp }

// failures counts a domain's failed answers in a row. It is safe for
// concurrent use.
type failures struct {
	inARow atomic.Int64
	last   atomic.Pointer[string] // the last failed answer
}

// failed returns d's failures, making them at its first failed answer.
func (d *domain) failed() *failures {
	if f := d.failures.Load(); f != nil {
		return f
	}
	d.failures.CompareAndSwap(nil, new(failures))
	return d.failures.Load()
}

// countAnswer notes the answer to a request to d under lim: status, or 0
// for a transport failure that what describes. An answer lim's
// ErrorStatuses name (see config.Limit.ErrorStatuses) adds one to d's
// failures in a row, and the WithMaxErrors-th gives d up; any other
// answer ends the run.
func (t *Transport) countAnswer(d *domain, lim *limitInForce, status int, what string) {
	if t.maxErrors == 0 || d.has(flagGivenUp) {
		return
	}
	if !feedback.Struggling(lim.rule.ErrorStatuses, status) {
		if f := d.failures.Load(); f != nil && f.inARow.Load() != 0 {
			f.inARow.Store(0)
		}
		return
	}
	f := d.failed()
	last := what // what alone would escape, costing every answer an allocation
	f.last.Store(&last)
	if f.inARow.Add(1) >= int64(t.maxErrors) && d.set(flagGivenUp, true) {
		t.logger.Warn("polite: domain given up", "domain", d.key, "failures", t.maxErrors, "last", what)
	}
}

// givenUp returns the error for a request to d if d was given up, else
// nil.
func (t *Transport) givenUp(d *domain) error {
	if !d.has(flagGivenUp) {
		return nil
	}
	last := ""
	if f := d.failures.Load(); f != nil {
		if s := f.last.Load(); s != nil {
			last = *s
		}
	}
	return &givenUpError{domain: d.key, failures: t.maxErrors, last: last}
}

// GivenUp returns the error a request to domain gets once the
// Transport gave domain up (see WithMaxErrors), matching ErrGivenUp, or
// nil if it did not. domain is keyed as a request would be.
func (t *Transport) GivenUp(domain string) error {
	if !t.made() {
		return nil
	}
	d, ok := t.domains.Load(t.keyOf(domain))
	if !ok {
		return nil
	}
	return t.givenUp(d)
}
