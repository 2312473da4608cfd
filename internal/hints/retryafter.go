// Package hints reads what an HTTP server says about when it may be asked again.
package hints

import (
	"net/http"
	"strings"
	"time"
)

// RetryAfter returns how long a Retry-After field value asks the client to
// wait at now. The value is delta-seconds ("120") or an HTTP date in any
// form http.ParseTime reads. ok is false for an empty or malformed value, a
// delay of zero, or a date that is not after now: such a value asks for
// nothing.
func RetryAfter(value string, now time.Time) (d time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if isDigits(value) {
		secs := saturatingInt(value)
		if secs == 0 {
			return 0, false
		}
		return seconds(float64(secs)), true
	}
	when, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	if d = when.Sub(now); d <= 0 {
		return 0, false
	}
	return d, true
}

// maxSeconds bounds every duration the package returns, far beyond any
// pause a caller would honour, so that arithmetic on it cannot overflow.
const maxSeconds = 1 << 32

// seconds converts a non-negative number of seconds to a Duration, capped
// at maxSeconds.
func seconds(s float64) time.Duration {
	return time.Duration(min(s, maxSeconds) * float64(time.Second))
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// saturatingInt parses s, a string of digits (see isDigits), stopping at
// maxSeconds.
func saturatingInt(s string) int64 {
	var n int64
	for i := 0; i < len(s); i++ {
		n = n*10 + int64(s[i]-'0')
		if n > maxSeconds {
			return maxSeconds
		}
	}
	return n
}
