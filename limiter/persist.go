package limiter

import (
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/polite-go/polite/internal/feedback"
)

// stateFormat names what a state file holds.
const stateFormat = "polite limiter.Memory state"

// savedKey is a keyState with its times in Unix nanoseconds, 0 for none.
type savedKey struct {
	Bucket      savedBucket    `json:"bucket,omitzero"`
	Last        int64          `json:"last,omitempty"`
	PausedUntil int64          `json:"paused_until,omitempty"`
	PauseWhy    Reason         `json:"pause_reason,omitempty"`
	Starts      []int64        `json:"starts,omitempty"`
	SentBucket  savedBucket    `json:"sent_bucket,omitzero"`
	Sent        int64          `json:"sent,omitempty"`
	QuietAt     int64          `json:"quiet_at"`
	Feedback    feedback.Saved `json:"feedback,omitzero"`
}

type savedBucket struct {
	Tokens float64 `json:"tokens"`
	At     int64   `json:"at"`
}

// replace makes st key's state. The turns handed out before are not st's:
// they give nothing back to it.
func (m *Memory) replace(key string, st *keyState) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.keys.Peek(key); e != nil {
		e.Value.drop()
		sh.keys.Remove(e)
	}
	sh.keys.Add(strings.Clone(key)).Value = *st
}

func (m *Memory) wall(n int64) int64 {
	if n == math.MinInt64 || n == math.MaxInt64 {
		return 0
	}
	return m.epoch.UnixNano() + n
}

func (m *Memory) local(wall int64) int64 {
	if wall == 0 {
		return math.MinInt64
	}
	return wall - m.epoch.UnixNano()
}

func (m *Memory) save(s *keyState) savedKey {
	k := savedKey{PauseWhy: s.pauseWhy, QuietAt: m.wall(s.quietAt), Last: m.wall(s.plan.last),
		Sent: m.wall(s.sent.last), PausedUntil: m.wall(s.pausedUntil),
		Bucket: m.saveBucket(s.plan.bucket), SentBucket: m.saveBucket(s.sent.bucket)}
	if s.fb != nil {
		k.Feedback = s.fb.Save()
	}
	for _, t := range s.starts {
		k.Starts = append(k.Starts, m.wall(t))
	}
	return k
}

func (m *Memory) saveBucket(b bucket) savedBucket {
	if b.at == none {
		return savedBucket{}
	}
	return savedBucket{b.tokens, m.wall(b.at)}
}

func (m *Memory) restoreBucket(b savedBucket) bucket {
	return bucket{tokens: b.Tokens, at: m.local(b.At)}
}

// restore makes the keyState that k holds, as it was saved: the rule the
// key is next used under fits it (see keyState.fit).
func (m *Memory) restore(k savedKey) (keyState, error) {
	s := newKeyState()
	s.restored = true
	s.pauseWhy, s.quietAt = k.PauseWhy, m.local(k.QuietAt)
	if k.Feedback != (feedback.Saved{}) {
		s.taught().Restore(k.Feedback)
	}
	s.plan = schedule{bucket: m.restoreBucket(k.Bucket), last: m.local(k.Last)}
	s.sent = schedule{bucket: m.restoreBucket(k.SentBucket), last: m.local(k.Sent)}
	s.pausedUntil = m.local(k.PausedUntil)
	for _, t := range k.Starts {
		s.starts = append(s.starts, m.local(t))
	}
	slices.Sort(s.starts)
	if math.IsNaN(s.plan.bucket.tokens) || math.IsNaN(s.sent.bucket.tokens) {
		return keyState{}, errors.New("a bucket holds no number of tokens")
	}
	return *s, nil
}
