package hints

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// RetryAfterField returns how long the Retry-After fields of h ask the
// client to wait at now: the longest of them, when a server sends more
// than one. See RetryAfter.
func RetryAfterField(h http.Header, now time.Time) (d time.Duration, ok bool) {
	for _, v := range h["Retry-After"] {
		if w, ok := RetryAfter(v, now); ok {
			d = max(d, w)
		}
	}
	return d, d > 0
}

// RetryAfter returns how long a Retry-After field value asks the client to
// wait at now. The value is delta-seconds ("120"), delta-seconds with a
// decimal part ("2.0", rounded up to whole seconds) or an HTTP date in any
// form http.ParseTime reads. ok is false for an empty or malformed value,
// a delay of zero, or a date that is not after now: such a value asks for
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
	if secs, ok := number(value); ok {
		if secs = math.Ceil(secs); secs == 0 {
			return 0, false
		}
		return seconds(secs), true
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
// at maxSeconds, rounding up what float64 cannot hold exactly ("64.57").
func seconds(s float64) time.Duration {
	return time.Duration(math.Ceil(min(s, maxSeconds) * float64(time.Second)))
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
