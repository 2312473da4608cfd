package polite

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/polite-go/polite/limiter"
)

// logTrace returns the Trace through which a Transport logs to logger
// (see WithLogger).
func logTrace(logger *slog.Logger) *Trace {
	l := &traceLog{logger: logger, seen: make(map[robotsRule]struct{})}
	return &Trace{Waited: l.waited, PauseObserved: l.pauseObserved, Refused: l.refused}
}

// traceLog logs what a Transport does. It is safe for concurrent use.
type traceLog struct {
	logger *slog.Logger
	mu     sync.Mutex
	seen   map[robotsRule]struct{} // the robots.txt rules logged at Info, at most maxLoggedRules
}

// robotsRule is a rule of a host's robots.txt.
type robotsRule struct{ host, rule string }

// maxLoggedRules bounds how many rules traceLog remembers having logged
// at Info; past it, it forgets them all and starts again.
const maxLoggedRules = 1000

func (l *traceLog) waited(ctx context.Context, domain, scope string, reason limiter.Reason, wait time.Duration) {
	if l.logger.Enabled(ctx, slog.LevelDebug) {
		l.logger.DebugContext(ctx, "polite: waited", "domain", domain, "wait", wait, "scope", scope, "rule", reason)
	}
}

func (l *traceLog) pauseObserved(ctx context.Context, domain string, reason limiter.Reason, pause time.Duration) {
	if l.logger.Enabled(ctx, slog.LevelDebug) {
		l.logger.DebugContext(ctx, "polite: server asked for a pause", "domain", domain, "added", pause, "reason", reason)
	}
}

// refused logs a request not sent: at Debug, and the first refusal of a
// host by a robots.txt rule at Info too. It logs the domain, the host and
// the rule, never the request's URL, whose query may hold a secret.
func (l *traceLog) refused(ctx context.Context, domain string, err error) {
	var robots robotsRefusal
	if !errors.As(err, &robots) {
		if l.logger.Enabled(ctx, slog.LevelDebug) {
			l.logger.DebugContext(ctx, "polite: request not sent", "domain", domain, "why", refusalCause(err))
		}
		return
	}
	host, rule := robots.RefusedBy()
	level := slog.LevelDebug
	if l.first(robotsRule{host, rule}) {
		level = slog.LevelInfo
	}
	if l.logger.Enabled(ctx, level) {
		l.logger.Log(ctx, level, "polite: robots.txt refused a request", "domain", domain, "host", host, "rule", rule)
	}
}

// first reports whether r is refusing a request for the first time.
func (l *traceLog) first(r robotsRule) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[r]; ok {
		return false
	}
	if len(l.seen) >= maxLoggedRules {
		clear(l.seen)
	}
	l.seen[r] = struct{}{}
	return true
}

// robotsRefusal is the error of a request refused by robots.txt.
type robotsRefusal interface {
	error
	RefusedBy() (host, rule string)
}

// refusalCause says in a few words why a request with error err was not
// sent.
func refusalCause(err error) string {
	switch {
	case errors.Is(err, ErrDisallowed):
		return "robots.txt"
	case errors.Is(err, ErrGivenUp):
		return "given up"
	case errors.Is(err, limiter.ErrWaitTooLong):
		return "wait too long"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}
