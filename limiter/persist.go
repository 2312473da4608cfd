package limiter

import (
	"errors"
	"fmt"
	"math"

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
	Windows     []savedWindow  `json:"windows,omitempty"`
	SentBucket  savedBucket    `json:"sent_bucket,omitzero"`
	Sent        int64          `json:"sent,omitempty"`
	QuietAt     int64          `json:"quiet_at"`
	Feedback    feedback.Saved `json:"feedback,omitzero"`
}

type savedBucket struct {
	Tokens float64 `json:"tokens"`
	At     int64   `json:"at"`
}

type savedWindow struct {
	Limit  int     `json:"limit"`
	Starts []int64 `json:"starts,omitempty"`
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
	k := savedKey{PauseWhy: s.pauseWhy, QuietAt: m.wall(s.quietAt)}
	if s.fb != nil {
		k.Feedback = s.fb.Save()
	}
	if s.bucket.used {
		k.Bucket = savedBucket{s.bucket.tokens, m.wall(s.bucket.at)}
	}
	if s.sentBucket.used {
		k.SentBucket = savedBucket{s.sentBucket.tokens, m.wall(s.sentBucket.at)}
	}
	if s.hasLast {
		k.Last = m.wall(s.last)
	}
	if s.hasSent {
		k.Sent = m.wall(s.sent)
	}
	if s.pausedUntil > math.MinInt64 {
		k.PausedUntil = m.wall(s.pausedUntil)
	}
	for _, w := range s.windows {
		sw := savedWindow{Limit: w.limit}
		for _, t := range w.live() {
			sw.Starts = append(sw.Starts, m.wall(t))
		}
		k.Windows = append(k.Windows, sw)
	}
	return k
}

func (m *Memory) restore(k savedKey) (*keyState, error) {
	s := newKeyState()
	s.pauseWhy, s.quietAt = k.PauseWhy, m.local(k.QuietAt)
	if k.Feedback != (feedback.Saved{}) {
		s.taught().Restore(k.Feedback)
	}
	if k.Bucket.At != 0 {
		s.bucket = bucket{tokens: k.Bucket.Tokens, at: m.local(k.Bucket.At), used: true}
	}
	if k.SentBucket.At != 0 {
		s.sentBucket = bucket{tokens: k.SentBucket.Tokens, at: m.local(k.SentBucket.At), used: true}
	}
	if k.Last != 0 {
		s.last, s.hasLast = m.local(k.Last), true
	}
	if k.Sent != 0 {
		s.sent, s.hasSent = m.local(k.Sent), true
	}
	if k.PausedUntil != 0 {
		s.pausedUntil = m.local(k.PausedUntil)
	}
	for _, sw := range k.Windows {
		if sw.Limit < 1 || len(sw.Starts) > sw.Limit {
			return nil, fmt.Errorf("a quota window of %d holds %d starts", sw.Limit, len(sw.Starts))
		}
		w := window{limit: sw.Limit}
		for _, t := range sw.Starts {
			w.starts = append(w.starts, m.local(t))
		}
		s.windows = append(s.windows, w)
	}
	if math.IsNaN(s.bucket.tokens) || math.IsNaN(s.sentBucket.tokens) {
		return nil, errors.New("a bucket holds no number of tokens")
	}
	return s, nil
}
