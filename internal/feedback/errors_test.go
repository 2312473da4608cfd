package feedback

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFeedbackErrorBackoff(t *testing.T) {
	s := time.Second
	failure := -1 // an event that is a transport failure
	tests := []struct {
		name     string
		statuses []int // the Policy's ErrorStatuses
		events   []int // statuses, one second apart, each sent when the previous was received
		want     []Verdict
	}{
		{"5xx answers double the step", nil, []int{500, 502, 504}, []Verdict{{s, Errors, s}, {2 * s, Errors, 2 * s}, {4 * s, Errors, 3 * s}}},
		{"transport failures count", nil, []int{failure, failure}, []Verdict{{s, Errors, s}, {2 * s, Errors, 2 * s}}},
		{"errors and 429s share the step", nil, []int{502, 429, failure}, []Verdict{{s, Errors, s}, {2 * s, Backoff, 2 * s}, {4 * s, Errors, 3 * s}}},
		{"a 503 is a backoff", nil, []int{503}, []Verdict{{s, Backoff, s}}},
		{"a success ends the backoff", nil, []int{502, 502, 200, 502}, []Verdict{{s, Errors, s}, {2 * s, Errors, 2 * s}, {}, {s, Errors, s}}},
		{"501 and 505 are not about load", nil, []int{501, 505, 507, 511}, []Verdict{{}, {}, {}, {}}},
		{"4xx are not errors by default", nil, []int{400, 403, 404, 408}, []Verdict{{}, {}, {}, {}}},
		{"an empty list turns it off", []int{}, []int{500, 502, 503, failure}, []Verdict{{}, {}, {}, {}}},
		{"a 429 always backs off", []int{}, []int{429}, []Verdict{{s, Backoff, s}}},
		{"a chosen list", []int{520, 408}, []int{500, 520, 408, failure}, []Verdict{{}, {s, Errors, s}, {2 * s, Errors, 2 * s}, {}}},
		{"transport failures alone", []int{0}, []int{502, failure}, []Verdict{{}, {s, Errors, s}}},
	}
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var st State
			p := &Policy{MaxPause: 10 * time.Minute, ErrorStatuses: tt.statuses}
			for i, e := range tt.events {
				at := t0.Add(time.Duration(i) * s)
				r := Response{Status: e, Sent: at}
				if e == failure {
					r = Response{Failed: true, Sent: at}
				}
				assert.Equal(t, tt.want[i], st.Observe(&r, at, p), "event %d (%d)", i, e)
			}
		})
	}
}

func TestFeedbackInFlightErrorsCountOnce(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var st State
	p := &Policy{MaxPause: time.Minute}
	// Five requests sent at once all time out: one step, not five.
	for i := range 5 {
		v := st.Observe(&Response{Failed: true, Sent: t0}, t0.Add(10*time.Second+time.Duration(i)), p)
		if i == 0 {
			assert.Equal(t, Verdict{time.Second, Errors, time.Second}, v)
		} else {
			assert.Zero(t, v, "a failure already in flight when the step began")
		}
	}
}

func TestFeedbackErrorBackoffIsCapped(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var st State
	p := &Policy{MaxPause: 5 * time.Second}
	var pauses []time.Duration
	for i := range 6 {
		at := t0.Add(time.Duration(i) * time.Minute)
		pauses = append(pauses, st.Observe(&Response{Status: 502, Sent: at}, at, p).Pause)
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}, pauses)
}

func TestAdaptiveStartAndMaxDelay(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &Policy{MaxPause: time.Minute, Adaptive: true, Floor: 100 * time.Millisecond, StartDelay: 5 * time.Second, MaxDelay: 8 * time.Second}

	var st State
	gap, why := st.MinDelay(p.StartDelay)
	assert.Equal(t, 5*time.Second, gap, "before the first response: the start delay")
	assert.Equal(t, Adaptive, why)
	var nothing *State
	gap, _ = nothing.MinDelay(p.StartDelay)
	assert.Equal(t, 5*time.Second, gap, "a key that observed nothing yet")

	st.Observe(&Response{Status: 200, Sent: t0, Latency: time.Second}, t0.Add(time.Second), p)
	gap, _ = st.MinDelay(p.StartDelay)
	assert.Equal(t, 3*time.Second, gap, "the first response moves halfway from the start delay: (5s + 1s) / 2")

	fast := st
	for i := range 10 {
		at := t0.Add(time.Duration(i+2) * time.Second)
		fast.Observe(&Response{Status: 200, Sent: at, Latency: 10 * time.Millisecond}, at.Add(10*time.Millisecond), p)
	}
	gap, _ = fast.MinDelay(p.StartDelay)
	assert.Less(t, gap, time.Second, "a fast server brings the gap below the start delay")
	assert.GreaterOrEqual(t, gap, p.Floor, "never below the configured pace")

	for i := range 20 {
		at := t0.Add(time.Duration(i+2) * time.Minute)
		st.Observe(&Response{Status: 200, Sent: at, Latency: time.Minute}, at.Add(time.Minute), p)
	}
	gap, _ = st.MinDelay(p.StartDelay)
	assert.LessOrEqual(t, gap, 8*time.Second, "a slow server raises the gap towards the maximum, not past it")
	assert.Greater(t, gap, 7990*time.Millisecond)

	before := gap
	st.Observe(&Response{Failed: true, Sent: t0}, t0.Add(time.Hour), p)
	gap, _ = st.MinDelay(p.StartDelay)
	assert.Equal(t, before, gap, "a transport failure has no latency to tell")

	assert.Equal(t, 4*time.Second, adaptDelay(10*time.Second, 2*time.Minute, 200, 1, 0, 4*time.Second), "a gap above the ceiling comes down to it")
	assert.Equal(t, 2*time.Minute, adaptDelay(0, 0, 200, 1, 2*time.Minute, 4*time.Second), "a slower configured pace is kept")
}
