package limiter

import "time"

// PauseAt pauses key for d from now, as a Retry-After would.
func (m *Memory) PauseAt(key string, d time.Duration, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nanos(now)
	m.stateLocked(key, n).pause(after(n, d), ReasonRetryAfter)
}

// ConfirmAt is Reservation.Confirm at now, for a reservation Memory made.
func ConfirmAt(res *Reservation, now time.Time) time.Duration {
	m := (*Memory)(res.Turn.(*memoryTurn))
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.confirmLocked(res, m.nanos(now), randJitter(res.rule))
}

// Len reports how many keys m tracks.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.keys.Len()
}
