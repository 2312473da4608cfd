// Package maxwait bounds how long a request may wait for its turn, for
// limiter.Wait and the Transport's wait through its scopes alike.
package maxwait

import (
	"context"
	"fmt"
	"time"
)

// Bound returns how long a request may wait for its turn from now:
// maxWait (0 for no bound), or what is left until ctx's deadline when that
// comes sooner, at least a nanosecond so that a deadline just passed still
// bounds it. It
// also returns what a turn later than that fails with: tooLong, or
// context.DeadlineExceeded when the deadline sets the bound.
func Bound(ctx context.Context, maxWait time.Duration, tooLong error, now time.Time) (time.Duration, error) {
	if deadline, ok := ctx.Deadline(); ok {
		if left := deadline.Sub(now); maxWait == 0 || left < maxWait {
			return max(left, 1), context.DeadlineExceeded
		}
	}
	return maxWait, tooLong
}

// Exceeded is the error of key's turn, due in wait, past the bound that
// Bound gave with cause: it wraps cause.
func Exceeded(key string, wait time.Duration, cause error) error {
	return fmt.Errorf("limiter: %s: turn in %v: %w", key, wait, cause)
}
