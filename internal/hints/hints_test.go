package hints

import (
	"net/http"
	"net/textproto"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  time.Duration
		ok    bool
	}{
		{"delta seconds", "120", 120 * time.Second, true},
		{"delta with spaces", "  7 ", 7 * time.Second, true},
		{"zero asks for nothing", "0", 0, false},
		{"huge delta saturates", "99999999999999999999999999", maxSeconds * time.Second, true},
		{"IMF-fixdate", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"RFC 850 date", now.Add(time.Hour).Format(time.RFC850), time.Hour, true},
		{"ANSI C date", now.Add(2 * time.Minute).Format(time.ANSIC), 2 * time.Minute, true},
		{"date in the past", now.Add(-time.Minute).Format(http.TimeFormat), 0, false},
		{"date equal to now", now.Format(http.TimeFormat), 0, false},
		{"empty", "", 0, false},
		{"negative", "-5", 0, false},
		{"decimal, rounded up", "1.5", 2 * time.Second, true},
		{"decimal zero", "0.0", 0, false},
		{"decimal far, saturates", "7200.0", 2 * time.Hour, true},
		{"two dots", "1.2.3", 0, false},
		{"a lone dot", ".", 0, false},
		{"garbage", "soon", 0, false},
		{"number with unit", "10s", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RetryAfter(tt.value, now)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestRateLimitWait(t *testing.T) {
	epoch := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"no fields", header(), 0, false},
		// Current draft: List of policies.
		{"current draft, string name", header("RateLimit", `"default";r=0;t=30`), 30 * time.Second, true},
		{"current draft, token name", header("RateLimit", `default;r=0;t=5`), 5 * time.Second, true},
		{"current draft, quota left", header("RateLimit", `"default";r=3;t=30`), 0, false},
		{"current draft, two policies, one exhausted", header("RateLimit", `"burst";r=4;t=1, "daily";r=0;t=3600`), time.Hour, true},
		{"current draft, split over two lines", header("RateLimit", `"burst";r=0;t=2`, "RateLimit", `"daily";r=0;t=9`), 9 * time.Second, true},
		{"current draft, window from policy", header("RateLimit", `"default";r=0`, "RateLimit-Policy", `"default";q=100;w=60`), time.Minute, true},
		{"current draft, other policy's window unused", header("RateLimit", `"a";r=0`, "RateLimit-Policy", `"b";q=100;w=60`), 0, false},
		{"current draft, no reset anywhere", header("RateLimit", `"default";r=0`), 0, false},
		{"current draft, decimal reset", header("RateLimit", `"default";r=0;t=1.5`), 1500 * time.Millisecond, true},
		{"current draft, reset 0", header("RateLimit", `"default";r=0;t=0`), 0, false},
		{"current draft, string reset", header("RateLimit", `"default";r=0;t="30"`), 0, false},
		{"current draft, malformed", header("RateLimit", `"default;r=0;t=30`), 0, false},
		{"current draft, trailing comma", header("RateLimit", `"default";r=0;t=30,`), 0, false},
		// Draft 07: Dictionary.
		{"draft 07 dictionary", header("RateLimit", `limit=10, remaining=0, reset=30`), 30 * time.Second, true},
		{"draft 07 dictionary, quota left", header("RateLimit", `limit=10, remaining=2, reset=30`), 0, false},
		// Older drafts.
		{"RateLimit-Remaining/Reset", header("RateLimit-Remaining", "0", "RateLimit-Reset", "20"), 20 * time.Second, true},
		{"RateLimit-Remaining left", header("RateLimit-Remaining", "5", "RateLimit-Reset", "20"), 0, false},
		{"RateLimit-Remaining without reset", header("RateLimit-Remaining", "0"), 0, false},
		{"RateLimit-Reset malformed", header("RateLimit-Remaining", "0", "RateLimit-Reset", "soon"), 0, false},
		// X-RateLimit-*.
		{"X-RateLimit delta", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "42"), 42 * time.Second, true},
		{"X-RateLimit epoch seconds", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(10*time.Minute)), 10 * time.Minute, true},
		{"X-RateLimit epoch milliseconds", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(now.Add(3*time.Second).UnixMilli(), 10)), 3 * time.Second, true},
		{"X-RateLimit epoch in the past", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(-time.Minute)), 0, false},
		{"X-RateLimit fractional epoch", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(2*time.Second)+".5"), 2500 * time.Millisecond, true},
		{"X-RateLimit absurd epoch", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "99999999999999999999"), 0, false},
		{"X-RateLimit negative", header("X-RateLimit-Remaining", "-1", "X-RateLimit-Reset", "42"), 0, false},
		{"X-RateLimit list value", header("X-RateLimit-Remaining", "0, 7", "X-RateLimit-Reset", "8, 9"), 8 * time.Second, true},
		{"X-RateLimit NaN", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "NaN"), 0, false},
		// X-Rate-Limit-* (X, Okta).
		{"X-Rate-Limit epoch", header("X-Rate-Limit-Remaining", "0", "X-Rate-Limit-Reset", epoch(time.Minute)), time.Minute, true},
		{"X-Rate-Limit left", header("X-Rate-Limit-Remaining", "3", "X-Rate-Limit-Reset", epoch(time.Minute)), 0, false},
		// Discord's X-RateLimit-Reset-After.
		{"Reset-After alone", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "64.57"), 64570 * time.Millisecond, true},
		{"Reset-After longer than Reset", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", epoch(time.Second), "X-RateLimit-Reset-After", "2"), 2 * time.Second, true},
		{"Reset-After garbage", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset-After", "-2"), 0, false},
		// OpenAI's pairs.
		{"OpenAI requests", header("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "20ms"), 20 * time.Millisecond, true},
		{"OpenAI tokens", header("X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "6m0s"), 6 * time.Minute, true},
		{"OpenAI tokens in seconds", header("X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "7"), 7 * time.Second, true},
		{"OpenAI negative duration", header("X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "-6m"), 0, false},
		{"OpenAI huge duration saturates", header("X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "2000000h"), maxSeconds * time.Second, true},
		// Dates.
		{"RFC 3339 to the minute", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", now.Add(time.Minute).Format("2006-01-02T15:04Z07:00")), time.Minute, true},
		{"RFC 3339", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", now.Add(90*time.Second).Format(time.RFC3339)), 90 * time.Second, true},
		{"HTTP date", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", now.Add(time.Hour).Format(http.TimeFormat)), time.Hour, true},
		{"date in the year 9999", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "9999-12-31T23:59:59Z"), 0, false},
		// Several at once: the longest wait wins.
		{"longest of several", header("RateLimit", `"default";r=0;t=5`, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "50"), 50 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RateLimitWait(tt.h, now, false)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRateLimitWaitRefused(t *testing.T) {
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"requests remain: the longest reset", header("X-Ratelimit-Remaining-Requests", "59", "X-Ratelimit-Reset-Requests", "1s",
			"X-Ratelimit-Remaining-Tokens", "149984", "X-Ratelimit-Reset-Tokens", "6m0s"), 6 * time.Minute},
		{"a reset without a remaining count", header("X-RateLimit-Reset", now.Add(time.Minute).Format("2006-01-02T15:04Z07:00")), time.Minute},
		{"current draft with quota left", header("RateLimit", `"default";r=50;t=30`), 30 * time.Second},
		{"draft 07 with quota left", header("RateLimit", `limit=10, remaining=5, reset=8`), 8 * time.Second},
		{"older drafts with quota left", header("RateLimit-Remaining", "595", "RateLimit-Reset", "61"), 61 * time.Second},
		{"no reset at all", header("X-RateLimit-Remaining", "5"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RateLimitWait(tt.h, now, true)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want > 0, ok)
			if tt.want > 0 && HasRateLimit(tt.h) {
				notRefused, _ := RateLimitWait(tt.h, now, false)
				assert.Less(t, notRefused, tt.want, "what a 429 adds")
			}
		})
	}
}

func TestRetryAfterField(t *testing.T) {
	d, ok := RetryAfterField(header("Retry-After", "5", "Retry-After", "soon", "Retry-After", "12"), now)
	assert.True(t, ok)
	assert.Equal(t, 12*time.Second, d, "the longest of several")
	_, ok = RetryAfterField(header(), now)
	assert.False(t, ok)
}

func TestFieldNamesAreCanonical(t *testing.T) {
	fields := []string{fieldRateLimit, fieldRateLimitPolicy}
	for _, p := range pairs {
		fields = append(fields, p.remaining, p.reset)
		if p.resetAfter != "" {
			fields = append(fields, p.resetAfter)
		}
	}
	for _, f := range fields {
		assert.Equal(t, textproto.CanonicalMIMEHeaderKey(f), f)
	}
}

func TestParseSF(t *testing.T) {
	tests := []struct {
		name, in string
		dict     bool
		ok       bool
		members  int
	}{
		{"list of strings with params", `"a";r=1;t=2, "b";r=0`, false, true, 2},
		{"list with tokens, decimals, bools, bytes", `tok;x=1.25;y=?1;z=:aGk=:, *t/x:y`, false, true, 2},
		{"negative integer", `"a";r=-3`, false, true, 1},
		{"inner list", `("a" "b")`, false, false, 0},
		{"empty", ``, false, false, 0},
		{"only spaces", `   `, false, false, 0},
		{"decimal with four fraction digits", `"a";r=1.2345`, false, false, 0},
		{"sixteen digits", `"a";r=1234567890123456`, false, false, 0},
		{"bad escape", `"a\x"`, false, false, 0},
		{"non-ASCII in string", "\"\xc3\xa9\"", false, false, 0},
		{"bad boolean", `"a";b=?2`, false, false, 0},
		{"upper-case key", `"a";R=1`, false, false, 0},
		{"dictionary", `limit=10, remaining=0, reset=30`, true, true, 3},
		{"dictionary with bare key", `a, b=2;p`, true, true, 2},
		{"dictionary from list text fails", `"a";r=1`, true, false, 0},
		{"list from dictionary text fails", `limit=10`, false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parse := parseSFList
			if tt.dict {
				parse = parseSFDict
			}
			got, ok := parse(tt.in)
			require.Equal(t, tt.ok, ok)
			assert.Len(t, got, tt.members)
		})
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "", "Sat, 01 Mar 2025 12:01:00 GMT", "Saturday, 01-Mar-25 12:00:00 GMT", "-1", "1e9", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := RetryAfter(v, now)
		if ok {
			require.Positive(t, d)
		} else {
			require.Zero(t, d)
		}
	})
}

func FuzzRateLimitWait(f *testing.F) {
	seeds := [][3]string{
		{`"default";r=0;t=30`, `"default";q=100;w=60`, ""},
		{`limit=10, remaining=0, reset=30`, "", ""},
		{"", "", "0"},
		{`a;r=0, b;r=0;t=1.5`, `a;w=2`, "1741000000"},
		{`("x");r=0`, `:YQ==:;w=1`, "1741000000123"},
		{"", "0.0", "6m0s"},
		{"", "0", "2024-08-01T12:30Z"},
		{"", "0", "Sat, 01 Mar 2025 12:01:00 GMT"},
		{"", "0", "-1h"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[2], false)
		f.Add(s[0], s[1], s[2], s[2], true)
	}
	f.Fuzz(func(t *testing.T, rl, policy, remaining, reset string, refused bool) {
		h := http.Header{}
		h.Set("RateLimit", rl)
		h.Set("RateLimit-Policy", policy)
		for _, p := range pairs {
			h.Set(p.remaining, remaining)
			h.Set(p.reset, reset)
			if p.resetAfter != "" {
				h.Set(p.resetAfter, reset)
			}
		}
		d, ok := RateLimitWait(h, now, refused)
		if ok {
			require.Positive(t, d)
			require.LessOrEqual(t, d, maxSeconds*time.Second)
		} else {
			require.Zero(t, d)
		}
		if !refused {
			more, _ := RateLimitWait(h, now, true)
			require.GreaterOrEqual(t, more, d, "a 429 never waits less")
		}
	})
}

func FuzzRetryAfterField(f *testing.F) {
	for _, s := range []string{"2.0", "7200.0", "0.5", ".5", "5.", "1.2.3", "Sun Nov  6 08:49:37 1994", "120"} {
		f.Add(s, "60")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		h := http.Header{"Retry-After": {a, b}}
		d, ok := RetryAfterField(h, now)
		require.Equal(t, ok, d > 0)
		require.GreaterOrEqual(t, d, time.Duration(0))
		if one, ok := RetryAfter(a, now); ok {
			require.GreaterOrEqual(t, d, one, "the longest of the values")
		}
	})
}
