package limiter

import "time"

// PauseAt pauses key for d from now, as a Retry-After would.
func (m *Memory) PauseAt(key string, d time.Duration, now time.Time) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	n := m.nanos(now)
	sh.stateLocked(&Request{Key: key}, n).pause(after(n, d), ReasonRetryAfter)
}

// ConfirmAt is Reservation.Confirm at now under the rule res was reserved
// with, for a reservation Memory made.
func ConfirmAt(res *Reservation, now time.Time) time.Duration {
	return ConfirmRuleAt(res, res.rule, now)
}

// ConfirmRuleAt is Reservation.Confirm at now under rule, for a
// reservation Memory made.
func ConfirmRuleAt(res *Reservation, rule *Rule, now time.Time) time.Duration {
	sh := (*shard)(res.turn.(*memoryTurn))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.confirmLocked(res, rule, sh.m.nanos(now), sh.m.jitter(rule))
}

// Len reports how many keys m tracks.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += sh.keys.Len()
		sh.mu.Unlock()
	}
	return n
}

// Changed reports how many keys m has noted as changed since its last
// commit.
func (m *Memory) Changed() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.changed)
		sh.mu.Unlock()
	}
	return n
}
