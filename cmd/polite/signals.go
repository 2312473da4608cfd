package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals stop a run gracefully: the crawl starts no new request, lets
// those already sent end, writes the state and prints its figures. SIGHUP
// is among them until it reloads -config.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// stopSignal is the cause of a context that a signal ended.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return "stopped by " + s.sig.String() }

// notifyStop returns a context that ends at the first of stopSignals, with
// a stopSignal as its cause, and a function that stops listening. After
// the first signal the signals take their default action again, so that a
// second one ends the process at once.
func notifyStop(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, stopSignals...)
	go func() {
		select {
		case sig := <-signals:
			signal.Stop(signals)
			cancel(stopSignal{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		cancel(nil)
	}
}

// stoppedBy returns the signal that ended ctx, if one did.
func stoppedBy(ctx context.Context) (os.Signal, bool) {
	var s stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return s.sig, true
	}
	return nil, false
}

// exitSignal is the exit status of a run stopped by sig: 128 plus its
// number, as shells report a process a signal ended (130 for SIGINT, 143
// for SIGTERM, 129 for SIGHUP).
func exitSignal(sig os.Signal) int {
	if n, ok := sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitFailed
}
