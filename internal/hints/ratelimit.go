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
	fieldRemaining        = "Ratelimit-Remaining"
	fieldReset            = "Ratelimit-Reset"
	fieldXRemaining       = "X-Ratelimit-Remaining"
	fieldXReset           = "X-Ratelimit-Reset"
	epochSecondsThreshold = 1e9  // a reset at least this large is a Unix time in seconds
	epochMillisThreshold  = 1e12 // and at least this large, in milliseconds
)

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
//   - RateLimit-Remaining with RateLimit-Reset (older drafts);
//   - X-RateLimit-Remaining with X-RateLimit-Reset.
//
// A reset is delta seconds, or, when it is clearly a timestamp (at least
// 1e9), Unix seconds, or Unix milliseconds from 1e12 on. When several
// fields ask for a wait, the longest wins. ok is false when none does:
// fields absent, malformed, with requests remaining, or a reset not after
// now. Malformed fields are ignored; RateLimitWait never fails.
//
// h must have canonical keys, as net/http makes them.
func RateLimitWait(h http.Header, now time.Time) (time.Duration, bool) {
	var wait time.Duration
	take := func(d time.Duration, ok bool) {
		if ok && d > wait {
			wait = d
		}
	}
	if v := h[fieldRateLimit]; len(v) > 0 {
		take(structured(strings.Join(v, ", "), h[fieldRateLimitPolicy]))
	}
	if v := h[fieldRemaining]; len(v) > 0 {
		take(remainingReset(v[0], h[fieldReset], now))
	}
	if v := h[fieldXRemaining]; len(v) > 0 {
		take(remainingReset(v[0], h[fieldXReset], now))
	}
	return wait, wait > 0
}

// structured reads a RateLimit field value, as a List of policies or as a
// draft-07 Dictionary.
func structured(value string, policies []string) (time.Duration, bool) {
	if members, ok := parseSFList(value); ok {
		var wait time.Duration
		for _, m := range members {
			if r, ok := m.param("r"); !ok || r.kind != sfNumber || r.num != 0 {
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
	if remaining.kind != sfNumber || remaining.num != 0 || reset.kind != sfNumber || reset.num <= 0 {
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
// say how many requests remain (RateLimit, RateLimit-Remaining,
// X-RateLimit-Remaining): without them RateLimitWait asks for nothing.
func HasRateLimit(h http.Header) bool {
	return len(h[fieldRateLimit]) > 0 || len(h[fieldRemaining]) > 0 || len(h[fieldXRemaining]) > 0
}

// remainingReset reads a Remaining/Reset pair of fields: a wait only when
// remaining is 0 and reset is in the future.
func remainingReset(remaining string, reset []string, now time.Time) (time.Duration, bool) {
	left, ok := number(firstItem(remaining))
	if !ok || left != 0 || len(reset) == 0 {
		return 0, false
	}
	r, ok := number(firstItem(reset[0]))
	if !ok || r <= 0 {
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
	d := time.Unix(int64(whole), int64(frac*1e9)).Sub(now)
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
