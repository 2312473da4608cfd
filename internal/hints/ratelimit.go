package hints

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The fields RateLimitWait reads, in canonical form (as net/http keys them).
const (
	fieldRateLimit        = "Ratelimit"
	fieldRateLimitPolicy  = "Ratelimit-Policy"
	epochSecondsThreshold = 1e9  // a reset at least this large is a Unix time in seconds
	epochMillisThreshold  = 1e12 // and at least this large, in milliseconds
)

// pair is a family of fields that say how many requests remain and when
// the quota resets; resetAfter, when set, is a second reset in delta
// seconds.
type pair struct{ remaining, reset, resetAfter string }

// pairs are the Remaining/Reset families RateLimitWait reads.
var pairs = []pair{
	{"Ratelimit-Remaining", "Ratelimit-Reset", ""},
	{"X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Reset-After"},
	{"X-Rate-Limit-Remaining", "X-Rate-Limit-Reset", ""},
	{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests", ""},
	{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens", ""},
}

// RateLimitWait returns how long the rate-limit fields of h ask the client
// to wait at now: when one of them says that no request remains, the time
// until its quota resets. It reads
//
//   - RateLimit, the current IETF draft's List of policies with the
//     remaining quota in r and the seconds to its reset in t
//     (`"default";r=0;t=30`); when t is missing, the window w of the
//     policy of the same name in RateLimit-Policy (`"default";q=100;w=60`).
//     The Dictionary form of draft 07 (`limit=10, remaining=0, reset=30`)
//     is read too;
//   - RateLimit-Remaining with RateLimit-Reset (older drafts, GitLab);
//   - X-RateLimit-Remaining with X-RateLimit-Reset and
//     X-RateLimit-Reset-After (GitHub, Reddit, Discord, Atlassian);
//   - X-Rate-Limit-Remaining with X-Rate-Limit-Reset (X, Okta);
//   - X-RateLimit-Remaining-Requests with X-RateLimit-Reset-Requests, and
//     the -Tokens pair (OpenAI).
//
// A reset is delta seconds, or, when it is clearly a timestamp (at least
// 1e9), Unix seconds, or Unix milliseconds from 1e12 on; or an RFC 3339
// time ("2024-08-01T12:30Z"), an HTTP date, or a Go duration ("6m0s",
// "20ms"). A remaining count may have a decimal part ("0.0").
//
// refused says that the response refused its request without saying when
// to come back (a 429 without Retry-After): then a reset counts even where
// the fields say requests remain, or say nothing of what remains. When
// several fields ask for a wait, the longest wins.
// ok is false when none does: fields absent, malformed, with requests
// remaining, or a reset not after now. Malformed fields are ignored;
// RateLimitWait never fails.
//
// h must have canonical keys, as net/http makes them.
func RateLimitWait(h http.Header, now time.Time, refused bool) (time.Duration, bool) {
	var wait time.Duration
	take := func(d time.Duration, ok bool) {
		if ok && d > wait {
			wait = d
		}
	}
	if v := h[fieldRateLimit]; len(v) > 0 {
		take(structured(strings.Join(v, ", "), h[fieldRateLimitPolicy], refused))
	}
	for _, p := range pairs {
		if !refused && len(h[p.remaining]) == 0 {
			continue
		}
		if !refused && !exhausted(h[p.remaining][0]) {
			continue
		}
		if v := h[p.reset]; len(v) > 0 {
			take(resetWait(v[0], now))
		}
		if v := h[p.resetAfter]; p.resetAfter != "" && len(v) > 0 {
			take(deltaSeconds(firstItem(v[0])))
		}
	}
	return wait, wait > 0
}

// exhausted reports whether a remaining count is zero.
func exhausted(remaining string) bool {
	n, ok := number(firstItem(remaining))
	return ok && n == 0
}

// structured reads a RateLimit field value, as a List of policies or as a
// draft-07 Dictionary.
func structured(value string, policies []string, refused bool) (time.Duration, bool) {
	if members, ok := parseSFList(value); ok {
		var wait time.Duration
		for _, m := range members {
			if r, ok := m.param("r"); !refused && (!ok || r.kind != sfNumber || r.num != 0) {
				continue
			}
			if t, ok := m.param("t"); ok {
				if t.kind == sfNumber && t.num > 0 {
					wait = max(wait, seconds(t.num))
				}
				continue
			}
			if w, ok := policyWindow(policies, m.value); ok {
				wait = max(wait, w)
			}
		}
		return wait, wait > 0
	}
	members, ok := parseSFDict(value)
	if !ok {
		return 0, false
	}
	var remaining, reset sfValue
	for _, m := range members {
		switch m.key {
		case "remaining", "r":
			remaining = m.value
		case "reset", "t":
			reset = m.value
		}
	}
	if !refused && (remaining.kind != sfNumber || remaining.num != 0) || reset.kind != sfNumber || reset.num <= 0 {
		return 0, false
	}
	return seconds(reset.num), true
}

// policyWindow returns the window w of the policy named name in the
// RateLimit-Policy field values.
func policyWindow(policies []string, name sfValue) (time.Duration, bool) {
	if len(policies) == 0 || (name.kind != sfString && name.kind != sfToken) {
		return 0, false
	}
	members, ok := parseSFList(strings.Join(policies, ", "))
	if !ok {
		return 0, false
	}
	for _, m := range members {
		if m.value.str != name.str || (m.value.kind != sfString && m.value.kind != sfToken) {
			continue
		}
		if w, ok := m.param("w"); ok && w.kind == sfNumber && w.num > 0 {
			return seconds(w.num), true
		}
	}
	return 0, false
}

// HasRateLimit reports, cheaply, whether h carries one of the fields that
// say how many requests remain (RateLimit and the Remaining fields
// RateLimitWait reads): without them RateLimitWait asks for nothing, unless
// the response was refused.
func HasRateLimit(h http.Header) bool {
	if len(h[fieldRateLimit]) > 0 {
		return true
	}
	for _, p := range pairs {
		if len(h[p.remaining]) > 0 {
			return true
		}
	}
	return false
}

// resetWait reads a reset field value: how long from now until it.
func resetWait(value string, now time.Time) (time.Duration, bool) {
	if r, ok := number(firstItem(value)); ok {
		return epochOrDelta(r, now)
	}
	value = strings.TrimSpace(value)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if when, err := time.Parse(layout, value); err == nil {
			return until(when, now)
		}
	}
	if when, err := http.ParseTime(value); err == nil {
		return until(when, now)
	}
	if d, err := time.ParseDuration(value); err == nil && d > 0 {
		return min(d, maxSeconds*time.Second), true
	}
	return 0, false
}

// epochOrDelta reads a numeric reset r: delta seconds, or a Unix time in
// seconds from epochSecondsThreshold on, in milliseconds from
// epochMillisThreshold on.
func epochOrDelta(r float64, now time.Time) (time.Duration, bool) {
	if r <= 0 {
		return 0, false
	}
	if r < epochSecondsThreshold {
		return seconds(r), true
	}
	if r >= epochMillisThreshold {
		r /= 1000
	}
	if r > maxEpochSeconds {
		return 0, false
	}
	whole, frac := math.Modf(r)
	return until(time.Unix(int64(whole), int64(frac*1e9)), now)
}

// deltaSeconds reads a reset given in seconds from now, such as "64.57".
func deltaSeconds(v string) (time.Duration, bool) {
	s, ok := number(v)
	if !ok || s <= 0 {
		return 0, false
	}
	return seconds(s), true
}

// until returns how long from now until when, if when is after now and
// not absurdly far.
func until(when, now time.Time) (time.Duration, bool) {
	if when.After(now.Add(maxSeconds * time.Second)) {
		return 0, false
	}
	d := when.Sub(now)
	return d, d > 0
}

// maxEpochSeconds is a Unix time far in the future (year 2286) that still
// fits a time.Duration from now.
const maxEpochSeconds = 1e10

// firstItem returns the first element of a comma-separated field value.
func firstItem(v string) string {
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// number parses a non-negative decimal number such as "30" or "1.5".
func number(s string) (float64, bool) {
	dots := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return 0, false
		}
	}
	if dots > 1 || s == "" || s == "." {
		return 0, false
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(n, 0) {
		return 0, false
	}
	return n, true
}
