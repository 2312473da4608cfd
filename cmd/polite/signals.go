package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stopSignals stop a run gracefully: the crawl starts no new request, lets
// those already sent end, writes the state and prints its figures. SIGHUP
// does so unless onHangup is set.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// onHangup, when set, is what SIGHUP does instead of stopping the run
// (polite fetch -config reloads the file).
var onHangup atomic.Pointer[func()]

// stopSignal is the cause of a context that a signal ended.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return "stopped by " + s.sig.String() }

// notifyStop returns a context that ends at the first of stopSignals, or
// at the first SIGPIPE (a write to a closed pipe, such as stdout into
// "| head"), with a stopSignal as its cause, and a function that stops
// listening. After the first signal the stopSignals take their default
// action again, so that a second one ends the process at once; SIGPIPE
// stays caught until the function is called, so that later writes to the
// closed pipe fail with an error instead of killing the process before it
// has written its state.
func notifyStop(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, stopSignals...)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	go func() {
		for {
			select {
			case sig := <-signals:
				if f := onHangup.Load(); sig == syscall.SIGHUP && f != nil {
					(*f)()
					continue
				}
				signal.Stop(signals)
				cancel(stopSignal{sig})
			case <-pipes:
				signal.Stop(signals)
				cancel(stopSignal{syscall.SIGPIPE})
			case <-ctx.Done():
			}
			return
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		signal.Stop(pipes)
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
