package feedback

import (
	"cmp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// event is one response the pause state machine takes in: sent and
// received are offsets from t0.
type event struct {
	status             int
	retryAfter, rlWait time.Duration
	sent, received     time.Duration
	want               Verdict
}

func TestFeedbackPauseStateMachine(t *testing.T) {
	const maxPause = 10 * time.Minute
	s := time.Second
	tests := []struct {
		name      string
		maxPause  time.Duration // 0: 10 minutes
		events    []event
		wantStep  time.Duration
		wantUntil time.Duration // offset from t0 of the latest pause's end; 0: none
	}{
		{"Retry-After on 429", 0, []event{
			{status: 429, retryAfter: 30 * s, received: s, want: Verdict{30 * s, RetryAfter, 30 * s}},
		}, 0, 31 * s},
		{"Retry-After on 503", 0, []event{
			{status: 503, retryAfter: 5 * s, received: s, want: Verdict{5 * s, RetryAfter, 5 * s}},
		}, 0, 6 * s},
		{"Retry-After capped", 0, []event{
			{status: 429, retryAfter: 48 * time.Hour, want: Verdict{maxPause, RetryAfter, maxPause}},
		}, 0, maxPause},
		{"Retry-After on any status", 0, []event{
			{status: 403, retryAfter: 30 * s, want: Verdict{30 * s, RetryAfter, 30 * s}},
		}, 0, 30 * s},
		{"Retry-After on 200", 0, []event{
			{status: 200, retryAfter: 30 * s, want: Verdict{30 * s, RetryAfter, 30 * s}},
		}, 0, 30 * s},
		{"RateLimit exhausted on 200", 0, []event{
			{status: 200, rlWait: 20 * s, want: Verdict{20 * s, RateLimit, 20 * s}},
		}, 0, 20 * s},
		{"RateLimit longer than Retry-After wins", 0, []event{
			{status: 429, retryAfter: 3 * s, rlWait: 60 * s, want: Verdict{60 * s, RateLimit, 60 * s}},
		}, 0, 60 * s},
		{"Retry-After longer than RateLimit wins", 0, []event{
			{status: 429, retryAfter: 65 * s, rlWait: 60 * s, want: Verdict{65 * s, RetryAfter, 65 * s}},
		}, 0, 65 * s},
		{"RateLimit wins over backoff", 0, []event{
			{status: 429, rlWait: 7 * s, want: Verdict{7 * s, RateLimit, 7 * s}},
		}, 0, 7 * s},
		{"backoff doubles", 0, []event{
			{status: 429, received: 0, want: Verdict{s, Backoff, s}},
			{status: 503, sent: 2 * s, received: 2 * s, want: Verdict{2 * s, Backoff, 2 * s}},
			{status: 429, sent: 5 * s, received: 5 * s, want: Verdict{4 * s, Backoff, 4 * s}},
		}, 4 * s, 9 * s},
		{"in-flight 429s count once", 0, []event{
			{status: 429, sent: 0, received: s, want: Verdict{s, Backoff, s}},
			{status: 429, sent: 0, received: s + 100*time.Millisecond},
			{status: 429, sent: 500 * time.Millisecond, received: 1500 * time.Millisecond},
			{status: 429, sent: 2 * s, received: 2 * s, want: Verdict{2 * s, Backoff, 2 * s}},
		}, 2 * s, 4 * s},
		{"a success resets the backoff", 0, []event{
			{status: 429, want: Verdict{s, Backoff, s}},
			{status: 429, sent: s, received: s, want: Verdict{2 * s, Backoff, 2 * s}},
			{status: 200, sent: 3 * s, received: 3 * s},
			{status: 429, sent: 4 * s, received: 4 * s, want: Verdict{s, Backoff, s}},
		}, s, 5 * s},
		{"a redirect is a success", 0, []event{
			{status: 429, want: Verdict{s, Backoff, s}},
			{status: 301, sent: s, received: s},
		}, 0, s},
		{"an in-flight success does not reset", 0, []event{
			{status: 429, sent: 0, received: s, want: Verdict{s, Backoff, s}},
			{status: 200, sent: 0, received: s},
			{status: 429, sent: 3 * s, received: 3 * s, want: Verdict{2 * s, Backoff, 2 * s}},
		}, 2 * s, 5 * s},
		{"a 404 neither backs off nor resets", 0, []event{
			{status: 429, want: Verdict{s, Backoff, s}},
			{status: 404, sent: 2 * s, received: 2 * s},
		}, s, s},
		{"backoff capped", 5 * s, []event{
			{status: 429, want: Verdict{s, Backoff, s}},
			{status: 429, sent: 1 * s, received: 1 * s, want: Verdict{2 * s, Backoff, 2 * s}},
			{status: 429, sent: 3 * s, received: 3 * s, want: Verdict{4 * s, Backoff, 4 * s}},
			{status: 429, sent: 7 * s, received: 7 * s, want: Verdict{5 * s, Backoff, 5 * s}},
			{status: 429, sent: 12 * s, received: 12 * s, want: Verdict{5 * s, Backoff, 5 * s}},
		}, 5 * s, 17 * s},
		{"a shorter pause inside a longer one adds nothing", 0, []event{
			{status: 429, retryAfter: 60 * s, want: Verdict{60 * s, RetryAfter, 60 * s}},
			{status: 200, rlWait: 10 * s, sent: s, received: s, want: Verdict{10 * s, RateLimit, 0}},
		}, 0, 60 * s},
		{"an overlapping pause adds its extension", 0, []event{
			{status: 429, retryAfter: 10 * s, want: Verdict{10 * s, RetryAfter, 10 * s}},
			{status: 200, rlWait: 10 * s, sent: 4 * s, received: 4 * s, want: Verdict{10 * s, RateLimit, 4 * s}},
		}, 0, 14 * s},
	}
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := cmp.Or(tt.maxPause, maxPause)
			var p State
			for i, e := range tt.events {
				got := p.Observe(&Response{Status: e.status, RetryAfter: e.retryAfter, RateLimit: e.rlWait, Sent: t0.Add(e.sent)}, t0.Add(e.received), &Policy{MaxPause: max})
				assert.Equal(t, e.want, got, "event %d", i)
			}
			assert.Equal(t, tt.wantStep, p.step, "backoff step")
			if tt.wantUntil == 0 {
				assert.Zero(t, p.until, "no pause")
			} else {
				assert.Equal(t, t0.Add(tt.wantUntil).UnixNano(), p.until, "pause end")
			}
		})
	}
}

func TestFeedbackCrawlDelayIsTheLongestOfTheHosts(t *testing.T) {
	const www, shop = "https://www.example.com:443", "https://shop.example.com:443"
	var f State
	steps := []struct {
		host string
		c    time.Duration
		want time.Duration
	}{
		{www, 0, 0},
		{www, 3 * time.Second, 3 * time.Second},
		{shop, time.Second, 3 * time.Second}, // the longest applies
		{www, 0, 0},                          // www's file fetched anew, without one
		{shop, time.Second, time.Second},     // shop's next request
		{shop, 2 * time.Second, 2 * time.Second},
		{www, time.Second, 2 * time.Second},
		{shop, 0, 0},
	}
	for _, s := range steps {
		f.SetCrawlDelay(s.host, s.c)
		got, _ := f.MinDelay(0)
		assert.Equal(t, s.want, got, "after %s says %v", s.host, s.c)
	}
}

func FuzzFeedbackPauseState(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, int64(time.Minute))
	f.Add([]byte{255, 0, 255, 0, 17, 200}, int64(time.Second))
	statuses := []int{200, 204, 301, 404, 429, 500, 503, 502, 501, 0} // 0: a transport failure
	f.Fuzz(func(t *testing.T, script []byte, maxPause int64) {
		if maxPause <= 0 {
			return
		}
		t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		var p State
		now := t0
		for i := 0; i+2 < len(script); i += 3 {
			b := script[i : i+3]
			now = now.Add(time.Duration(b[0]) * 100 * time.Millisecond)
			r := Response{Status: statuses[int(b[1])%len(statuses)]}
			r.Failed = r.Status == 0
			if b[1]&0x10 != 0 {
				r.RetryAfter = time.Duration(b[2]) * time.Second
			}
			if b[1]&0x20 != 0 {
				r.RateLimit = time.Duration(b[2]) * time.Minute
			}
			r.Sent = now.Add(-time.Duration(b[2]) * 10 * time.Millisecond)
			before := p.until
			v := p.Observe(&r, now, &Policy{MaxPause: time.Duration(maxPause)})
			require.GreaterOrEqual(t, v.Pause, time.Duration(0))
			require.LessOrEqual(t, v.Pause, time.Duration(maxPause))
			require.GreaterOrEqual(t, v.Added, time.Duration(0))
			require.LessOrEqual(t, v.Added, v.Pause)
			require.LessOrEqual(t, p.step, time.Duration(maxPause))
			require.GreaterOrEqual(t, p.until, before, "a pause never shortens")
			if v.Pause > 0 {
				require.NotEmpty(t, v.Reason)
			}
		}
	})
}
