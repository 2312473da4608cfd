package limiter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/polite-go/polite/internal/feedback"
)

// stateVersion is the first byte of a key's encoded state: the layout
// below. A Memory refuses a state of any other version.
const stateVersion = 1

// A key's encoded state is stateVersion, then a byte of the fields it
// holds (the bits below), then QuietAt and each field it holds, in the
// order of the bits. Times are Unix nanoseconds and durations
// nanoseconds, each a varint; a number of tokens is a float64's 8 bytes,
// little-endian; a string is its length, a uvarint, then its bytes;
// starts are their count, a uvarint, then each start.
const (
	hasBucket     = 1 << iota // tokens, at
	hasLast                   // the plan's latest start
	hasPause                  // until, reason
	hasStarts                 // the starts a quota may still count
	hasSentBucket             // tokens, at
	hasSent                   // the latest start made
	hasFeedback               // until, reason, step, step at, adaptive, crawl delay, host
	knownFields   = 1<<iota - 1
)

// encodeState returns s's state as a StateStore keeps it.
func (m *Memory) encodeState(s *keyState) []byte {
	var fields byte
	b := make([]byte, 2, 64)
	b = binary.AppendVarint(b, m.wall(s.quietAt))
	if s.plan.bucket.at != none {
		fields |= hasBucket
		b = m.appendBucket(b, s.plan.bucket)
	}
	if s.plan.last != none {
		fields |= hasLast
		b = binary.AppendVarint(b, m.wall(s.plan.last))
	}
	if s.pausedUntil != none {
		fields |= hasPause
		b = binary.AppendVarint(b, m.wall(s.pausedUntil))
		b = appendString(b, string(s.pauseWhy))
	}
	if len(s.starts) > 0 {
		fields |= hasStarts
		b = binary.AppendUvarint(b, uint64(len(s.starts)))
		for _, t := range s.starts {
			b = binary.AppendVarint(b, m.wall(t))
		}
	}
	if s.sent.bucket.at != none {
		fields |= hasSentBucket
		b = m.appendBucket(b, s.sent.bucket)
	}
	if s.sent.last != none {
		fields |= hasSent
		b = binary.AppendVarint(b, m.wall(s.sent.last))
	}
	if s.fb != nil {
		if f := s.fb.Save(); f != (feedback.Saved{}) {
			fields |= hasFeedback
			b = binary.AppendVarint(b, f.Until)
			b = appendString(b, f.Reason)
			b = binary.AppendVarint(b, int64(f.Step))
			b = binary.AppendVarint(b, f.StepAt)
			b = binary.AppendVarint(b, int64(f.Adaptive))
			b = binary.AppendVarint(b, int64(f.Crawl))
			b = appendString(b, f.Host)
		}
	}
	b[0], b[1] = stateVersion, fields
	return b
}

func (m *Memory) appendBucket(b []byte, k bucket) []byte {
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(k.tokens))
	return binary.AppendVarint(b, m.wall(k.at))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeState makes the keyState that encodeState wrote, as it was: the
// rule the key is next used under fits it (see keyState.fit).
func (m *Memory) decodeState(state []byte) (keyState, error) {
	if len(state) < 2 || state[0] != stateVersion {
		if len(state) > 0 && state[0] != stateVersion {
			return keyState{}, fmt.Errorf("a state of version %d, and this build reads version %d", state[0], stateVersion)
		}
		return keyState{}, errors.New("a state too short")
	}
	fields := state[1]
	if fields&^knownFields != 0 {
		return keyState{}, fmt.Errorf("unknown fields %#x in a state", fields&^knownFields)
	}
	d := decoder{rest: state[2:]}
	s := newKeyState()
	s.restored = true
	s.quietAt = m.local(d.varint())
	if fields&hasBucket != 0 {
		s.plan.bucket = m.bucketOf(&d)
	}
	if fields&hasLast != 0 {
		s.plan.last = m.local(d.varint())
	}
	if fields&hasPause != 0 {
		s.pausedUntil = m.local(d.varint())
		s.pauseWhy = Reason(d.string())
	}
	if fields&hasStarts != 0 {
		n := d.uvarint()
		if n > uint64(len(d.rest)) { // each start takes a byte at least
			return keyState{}, errors.New("a state's starts go past its end")
		}
		s.starts = make([]int64, 0, n)
		for range n {
			s.starts = append(s.starts, m.local(d.varint()))
		}
		slices.Sort(s.starts)
	}
	if fields&hasSentBucket != 0 {
		s.sent.bucket = m.bucketOf(&d)
	}
	if fields&hasSent != 0 {
		s.sent.last = m.local(d.varint())
	}
	if fields&hasFeedback != 0 {
		f := feedback.Saved{Until: d.varint(), Reason: d.string(), Step: time.Duration(d.varint()), StepAt: d.varint(),
			Adaptive: time.Duration(d.varint()), Crawl: time.Duration(d.varint()), Host: d.string()}
		s.observed().Restore(f)
	}
	switch {
	case d.err != nil:
		return keyState{}, d.err
	case len(d.rest) > 0:
		return keyState{}, errors.New("a state with bytes past its end")
	case math.IsNaN(s.plan.bucket.tokens) || math.IsNaN(s.sent.bucket.tokens):
		return keyState{}, errors.New("a bucket holds no number of tokens")
	}
	return *s, nil
}

func (m *Memory) bucketOf(d *decoder) bucket {
	tokens := math.Float64frombits(d.uint64())
	return bucket{tokens: tokens, at: m.local(d.varint())}
}

// decoder reads an encoded state; after its first error it reads zeros.
type decoder struct {
	rest []byte
	err  error
}

var errStateEnds = errors.New("a state ends too soon")

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.rest)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.rest = d.rest[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.rest)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.rest = d.rest[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.rest) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.rest)
	d.rest = d.rest[8:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.rest)) {
		d.fail()
		return ""
	}
	s := string(d.rest[:n])
	d.rest = d.rest[n:]
	return s
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errStateEnds
	}
	d.rest = nil
}

// replace makes st key's state, keeping key as it is. The turns handed
// out before are not st's: they give nothing back to it.
func (m *Memory) replace(key string, st *keyState) {
	sh := m.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.keys.Peek(key); e != nil {
		e.Value.drop()
		sh.keys.Remove(e)
	}
	sh.keys.Add(key).Value = *st
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
