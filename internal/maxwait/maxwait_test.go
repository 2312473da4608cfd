package maxwait

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBound(t *testing.T) {
	tooLong := errors.New("too long")
	in := func(d time.Duration) context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(d))
		t.Cleanup(cancel)
		return ctx
	}
	tests := []struct {
		name      string
		ctx       context.Context
		maxWait   time.Duration
		least     time.Duration // the bound is in [least, most]
		most      time.Duration
		wantCause error
	}{
		{"no bound", context.Background(), 0, 0, 0, tooLong},
		{"maxWait alone", context.Background(), time.Minute, time.Minute, time.Minute, tooLong},
		{"a deadline alone", in(time.Hour), 0, 59 * time.Minute, time.Hour, context.DeadlineExceeded},
		{"a sooner deadline", in(time.Minute), time.Hour, 59 * time.Second, time.Minute, context.DeadlineExceeded},
		{"a later deadline", in(time.Hour), time.Minute, time.Minute, time.Minute, tooLong},
		{"a deadline passed", in(-time.Second), time.Minute, 1, 1, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bound, cause := Bound(tt.ctx, tt.maxWait, tooLong, time.Now())
			assert.GreaterOrEqual(t, bound, tt.least)
			assert.LessOrEqual(t, bound, tt.most)
			assert.Equal(t, tt.wantCause, cause)
		})
	}
}

func TestExceeded(t *testing.T) {
	err := Exceeded("example.com", 3*time.Second, context.DeadlineExceeded)
	assert.EqualError(t, err, "limiter: example.com: turn in 3s: context deadline exceeded")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
