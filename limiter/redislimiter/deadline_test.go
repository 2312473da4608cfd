package redislimiter

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeadlinesAreSharedWithinASlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ms = time.Millisecond
		ds := newDeadlines(160 * ms) // slots of 10ms
		start := time.Now()
		first, cancel := ds.bound(context.Background())
		defer cancel()
		at, ok := first.Deadline()
		require.True(t, ok)
		assert.Equal(t, start.Add(170*ms), at, "the timeout after the slot")

		time.Sleep(9 * ms)
		same, cancel := ds.bound(context.Background())
		defer cancel()
		assert.Same(t, first, same, "a call in the same slot shares the deadline")

		time.Sleep(ms)
		next, cancel := ds.bound(context.Background())
		defer cancel()
		assert.NotSame(t, first, next)
		at, _ = next.Deadline()
		assert.Equal(t, start.Add(180*ms), at, "a new slot starts with the call that needs it")

		assert.NoError(t, first.Err())
		<-first.Done()
		assert.Equal(t, start.Add(170*ms), time.Now(), "done at its deadline")
		assert.ErrorIs(t, first.Err(), context.DeadlineExceeded)
		assert.NoError(t, next.Err())
		<-next.Done()
		assert.ErrorIs(t, next.Err(), context.DeadlineExceeded)
	})
}

type ctxKey struct{}

func TestDeadlinesBoundEveryContext(t *testing.T) {
	const timeout = 160 * time.Millisecond
	tests := []struct {
		name     string
		parent   func() (context.Context, context.CancelFunc)
		deadline time.Duration // from now
		ownDone  bool          // ends with the parent, not only at the deadline
	}{
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, timeout + timeout/16, false},
		{"values", func() (context.Context, context.CancelFunc) {
			return context.WithValue(context.Background(), ctxKey{}, "v"), func() {}
		}, timeout + timeout/16, false},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, timeout + timeout/16, true},
		{"later deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "v"), time.Hour)
		}, timeout + timeout/16, true},
		{"earlier deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "v"), 50*time.Millisecond)
		}, 50 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ds := newDeadlines(timeout)
				parent, cancelParent := tt.parent()
				defer cancelParent()
				start := time.Now()
				ctx, cancel := ds.bound(parent)
				defer cancel()
				at, ok := ctx.Deadline()
				require.True(t, ok)
				assert.Equal(t, start.Add(tt.deadline), at)
				assert.Equal(t, parent.Value(ctxKey{}), ctx.Value(ctxKey{}), "the parent's values")
				assert.NoError(t, ctx.Err())

				if tt.ownDone {
					cancelParent()
					<-ctx.Done()
					assert.Equal(t, start, time.Now(), "ends with its parent")
					assert.ErrorIs(t, ctx.Err(), context.Canceled)
					return
				}
				<-ctx.Done()
				assert.Equal(t, start.Add(tt.deadline), time.Now())
				assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
			})
		})
	}
}

func TestDeadlinesUnderConcurrentCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 160 * time.Millisecond
		ds := newDeadlines(timeout)
		var mu sync.Mutex
		seen := map[context.Context]bool{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					start := time.Now()
					ctx, cancel := ds.bound(context.Background())
					at, _ := ctx.Deadline()
					cancel()
					assert.GreaterOrEqual(t, at.Sub(start), timeout)
					assert.LessOrEqual(t, at.Sub(start), timeout+timeout/16)
					mu.Lock()
					seen[ctx] = true
					mu.Unlock()
					time.Sleep(time.Millisecond)
				}
			})
		}
		wg.Wait()
		// 50ms of calls, in slots of 10ms: a deadline per slot, not per call.
		assert.LessOrEqual(t, len(seen), 6)
	})
}

func TestCutEndsTheCallsUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 160 * time.Millisecond
		ds := newDeadlines(timeout)
		shared, cancel := ds.bound(context.Background())
		defer cancel()
		time.Sleep(timeout / 2) // a later slot: the cut ends every deadline under way
		values, cancel := ds.bound(context.WithValue(context.Background(), ctxKey{}, "v"))
		defer cancel()
		parent, cancelParent := context.WithTimeout(context.Background(), time.Hour)
		defer cancelParent()
		own, cancel := ds.bound(parent)
		defer cancel()
		early, cancelEarly := context.WithTimeout(context.Background(), timeout/4)
		defer cancelEarly()
		bounded, cancel := ds.bound(early)
		defer cancel()

		ds.cut()
		for name, ctx := range map[string]context.Context{"shared": shared, "values": values, "own": own} {
			select {
			case <-ctx.Done():
			default:
				t.Errorf("%s: not ended by the cut", name)
			}
		}
		assert.NoError(t, bounded.Err(), "a context that ends before the timeout is its own")
		assert.NoError(t, parent.Err(), "the caller's context goes on")

		after, cancel := ds.bound(context.Background())
		defer cancel()
		assert.NoError(t, after.Err(), "a call after the cut gets a deadline of its own")
		at, _ := after.Deadline()
		assert.Equal(t, time.Now().Add(timeout+timeout/16), at)
	})
}
