package limiter

import "time"

// What the external tests need to speak of reasons and pauses.
const (
	ReasonRate     = reasonRate
	ReasonMinDelay = reasonMinDelay
	ReasonJitter   = reasonJitter
	ReasonQuota    = reasonQuota
	ReasonQueue    = reasonQueue
	ReasonPause    = Reason("retry-after") // PauseAt's
)

// PauseAt pauses key for d from now, as a Retry-After would.
func (m *Memory) PauseAt(key string, d time.Duration, now time.Time) {
	n := m.nanos(now)
	s := m.lockState(key, &noRule, n)
	defer s.mu.Unlock()
	s.pause(after(n, d), ReasonPause)
}

// ConfirmAt is Reservation.Confirm at now, for a reservation Memory made.
func ConfirmAt(res *Reservation, now time.Time) time.Duration {
	s := res.Turn.(*lockedState)
	return s.confirmAt(res, s.owner.nanos(now))
}

// Len reports how many keys m tracks.
func (m *Memory) Len() int { return int(m.count.Load()) }

// WithoutMemo is r without the memo RuleOf gives it, to compare Rules.
func (r Rule) WithoutMemo() Rule {
	r.memo = nil
	return r
}
