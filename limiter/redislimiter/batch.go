package redislimiter

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher sends the commands of concurrent calls to one Redis together. A
// call that finds fewer than lanes batches under way sends its command at
// once, alone, so that a lone caller waits for nothing more than its round
// trip. A call that finds every lane busy queues; when a batch is
// answered, the call that sent it hands the queue over, as the next batch
// of one pipeline, to the first call queued, which sends it. Under load,
// then, one round trip carries many calls, and Redis and the client spend
// a read and a write on many commands.
//
// A client of several nodes (a Cluster, a Ring) is not batched: a pipeline
// is answered once every node has answered its part, so a node that fails
// would hold the calls to the others until the timeout, and make an outage
// of them.
//
// A batcher is safe for concurrent use.
type batcher struct {
	lanes int // batches under way at most: half the client's pool; 0: no batching

	mu    sync.Mutex
	busy  int       // batches under way
	queue []*queued // calls waiting for a lane, oldest first
}

// newBatcher returns the batcher of client: with a *redis.Client, as many
// lanes as the Limiter lets its calls take of the client's pool (half its
// connections: see poolGuard), so that a call queues only when it would
// have waited for a connection anyway, and then goes with the next round
// trip.
func newBatcher(client redis.UniversalClient) *batcher {
	if c, ok := client.(*redis.Client); ok {
		return &batcher{lanes: max(c.Options().PoolSize/2, 1)}
	}
	return &batcher{}
}

// maxBatch bounds the commands of one batch, so that one reply does not
// grow without end.
const maxBatch = 128

// queued is a call waiting for a lane.
type queued struct {
	ctx  context.Context
	cmd  *redis.Cmd
	done chan struct{} // closed when the call is answered, or handed the lead
	lead []*queued     // set before done is closed: the batch this call sends, itself first
}

// process sends cmd through the batcher and returns its reply, or ctx's
// error once ctx ends before the reply comes. A call that gives up leaves
// its command to the batch under way, if any, which answers it for
// nobody; one handed the lead of a batch sends it first, as the others
// wait on it.
func (l *Limiter) process(ctx context.Context, cmd *redis.Cmd) (any, error) {
	b := l.batch
	if b.lanes == 0 {
		l.sendNow(ctx, []*queued{{ctx: ctx, cmd: cmd}})
		return cmd.Result()
	}
	b.mu.Lock()
	if b.busy < b.lanes {
		b.busy++
		b.mu.Unlock()
		l.send(ctx, []*queued{{ctx: ctx, cmd: cmd}})
		return cmd.Result()
	}
	q := &queued{ctx: ctx, cmd: cmd, done: make(chan struct{})}
	b.queue = append(b.queue, q)
	b.mu.Unlock()
	select {
	case <-q.done:
	case <-ctx.Done():
		if b.abandon(q) {
			return nil, ctx.Err()
		}
		<-q.done
	}
	if q.lead != nil {
		l.send(ctx, q.lead)
	}
	return cmd.Result()
}

// abandon takes q, whose caller gives up, out of the queue, and reports
// whether its caller may go: unless it was handed the lead of a batch.
func (b *batcher) abandon(q *queued) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.queue, q); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
		return true
	}
	return q.lead == nil
}

// send sends batch, one command alone or a pipeline of them, answers each
// call of it, and then hands the queue to the next batch, or frees the
// lane.
func (l *Limiter) send(ctx context.Context, batch []*queued) {
	if len(batch) > 1 {
		var stop func()
		ctx, stop = batchContext(batch, l.deadlines.slot)
		defer stop()
	}
	l.sendNow(ctx, batch)
	for _, q := range batch[1:] {
		close(q.done)
	}
	b := l.batch
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.busy--
		b.mu.Unlock()
		return
	}
	if err := unreachable(batch); err != nil {
		// Redis is not there: the calls queued meanwhile fail as the
		// batch did, rather than dial again in the client's pool (see
		// poolGuard), and the Limiter's fallback takes them.
		queue := b.queue
		b.queue = nil
		b.busy--
		b.mu.Unlock()
		for _, q := range queue {
			q.cmd.SetErr(err)
			close(q.done)
		}
		return
	}
	n := min(len(b.queue), maxBatch)
	next := b.queue[0]
	next.lead = append([]*queued(nil), b.queue[:n]...)
	b.queue = append(b.queue[:0], b.queue[n:]...)
	b.mu.Unlock()
	close(next.done)
}

// sendNow sends batch's commands in one round trip, within the pool
// guard's bound, and sets each one's reply or error.
func (l *Limiter) sendNow(ctx context.Context, batch []*queued) {
	if err := l.enter(ctx); err != nil {
		for _, q := range batch {
			q.cmd.SetErr(err)
		}
		return
	}
	defer l.leave()
	if len(batch) == 1 {
		_ = l.client.Process(ctx, batch[0].cmd)
		return
	}
	pipe := l.client.Pipeline()
	for _, q := range batch {
		_ = pipe.Process(ctx, q.cmd)
	}
	_, _ = pipe.Exec(ctx)
}

// batchContext returns the context of a batch of several calls, and the
// function that releases it: it ends when every call's context has ended
// (one call cancelled must not fail the others), or grace after the
// latest of their deadlines (a call whose deadline has passed, its timer
// not fired yet on a loaded machine, must not see the batch fail first).
// Calls that all have one shared deadline (deadlines.bound), the common
// case, end together: their batch has that context, which costs neither a
// timer nor a goroutine per call.
func batchContext(batch []*queued, grace time.Duration) (context.Context, func()) {
	if shared := sharedDeadline(batch[0].ctx); shared != nil && !slices.ContainsFunc(batch[1:], func(q *queued) bool {
		return sharedDeadline(q.ctx) != shared
	}) {
		return batch[0].ctx, func() {}
	}
	var latest time.Time
	for _, q := range batch {
		if d, ok := q.ctx.Deadline(); ok && d.After(latest) {
			latest = d
		}
	}
	base := context.WithoutCancel(batch[0].ctx)
	var ctx context.Context
	var cancel context.CancelFunc
	if latest.IsZero() {
		ctx, cancel = context.WithCancel(base)
	} else {
		ctx, cancel = context.WithDeadline(base, latest.Add(grace))
	}
	var left atomic.Int64
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, q := range batch {
		stops[i] = context.AfterFunc(q.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// unreachable returns the error of batch when every command of it failed
// to reach Redis (a connection refused, reset or closed); nil otherwise.
func unreachable(batch []*queued) error {
	for _, q := range batch {
		err := q.cmd.Err()
		var op *net.OpError
		if err == nil || !errors.As(err, &op) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
	}
	return batch[0].cmd.Err()
}
