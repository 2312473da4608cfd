// The cost of polite.WithTrace, side by side, run from the repository's
// root:
//
//	go test -run '^$' -bench 'RoundTripTrace' -benchmem -count 8 ./benchmarks
//
// and, for the Transport before the hook, BenchmarkRoundTrip/serial/polite
// at the commit before it.

package benchmarks

import (
	"context"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/limiter"
)

// noopTrace has every hook set, each doing nothing.
var noopTrace = &polite.Trace{
	TurnAsked:     func(context.Context, string) {},
	Waited:        func(context.Context, string, string, limiter.Reason, time.Duration) {},
	PauseObserved: func(context.Context, string, limiter.Reason, time.Duration) {},
	Refused:       func(context.Context, string, error) {},
	Sent:          func(context.Context, string, bool) {},
	Answered:      func(context.Context, string, int, error) {},
	RobotsFetch: func(ctx context.Context, _ string) (context.Context, func(error)) {
		return ctx, func(error) {}
	},
	RobotsJoined: func(context.Context, context.Context) {},
}

// BenchmarkRoundTripTrace is BenchmarkRoundTrip's serial polite case
// without a Trace ("unset") and with one whose hooks do nothing ("noop"),
// when tokens are always available.
func BenchmarkRoundTripTrace(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []polite.Option
	}{
		{"unset", nil},
		{"noop", []polite.Option{polite.WithTrace(noopTrace)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tr, err := polite.NewTransport(nopBase{}, append([]polite.Option{polite.WithDefault(unlimited)}, tc.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			req := requests(1)[0]
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
