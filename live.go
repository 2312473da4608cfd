package polite

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/polite-go/polite/config"
)

// Limit returns the limit that paces domain: its own, that of the most
// specific pattern it falls under, or the default. domain is keyed as a
// request would be: a host name (www.example.com) or URL answers for its
// key (example.com under DomainKey).
func (t *Transport) Limit(domain string) config.Limit {
	if !t.made() {
		return config.Limit{}
	}
	return *t.limits.Load().domainLimit(t.keyOf(domain))
}

// ServerLimit returns the limit of the servers' scope in force, and false
// if there is none (see WithServerLimit).
func (t *Transport) ServerLimit() (config.Limit, bool) {
	if !t.made() {
		return config.Limit{}, false
	}
	if lim := t.limits.Load().server; lim != nil {
		return *lim.limit, true
	}
	return config.Limit{}, false
}

// GlobalLimit returns the limit of the global scope in force, and false if
// there is none (see WithGlobalLimit).
func (t *Transport) GlobalLimit() (config.Limit, bool) {
	if !t.made() {
		return config.Limit{}, false
	}
	if lim := t.limits.Load().global; lim != nil {
		return *lim.limit, true
	}
	return config.Limit{}, false
}

// SetLimit sets the limit of domain, a key or a pattern named as
// WithDomain names it, while the Transport runs: the next turn of each
// key it applies to follows l, and so does every request already waiting,
// whose departure is checked under the limit in force when it leaves. l
// counts a key's earlier requests, as far as the limiter still holds
// them, and its latest request in any case: a limiter forgets a key's
// pace once it has recovered, and a domain the Transport tracks then
// tells it when its latest request went (limiter.Request's LastStart).
// An invalid limit or name changes nothing and is a *config.FieldError
// naming the domain and the field. A change never widens what is in
// force for requests under way: a new max_concurrent counts every request
// of the key in flight, those that started under the old limit too (a
// request waiting for a place waits under the max_concurrent in force
// when it asked for one); and a quota's history outlives a change while
// the limiter holds the key's state: a quota removed and put back within
// its window, or changed, counts the requests made meanwhile.
func (t *Transport) SetLimit(domain string, l config.Limit) error {
	if !t.made() {
		return errNotMade
	}
	t.limitsMu.Lock()
	defer t.limitsMu.Unlock()
	old := t.limits.Load()
	one, err := resolveDomains([]domainEntry{{name: domain, limit: l}}, t.keyFunc, *old.def)
	if err != nil {
		return err
	}
	ls := *old
	ls.domains, ls.inForce = old.domains.Clone(), new(sync.Map)
	one.Range(func(name string, l *config.Limit) bool {
		ls.domains.Set(name, l)
		t.logChange(name, l)
		return true
	})
	t.limits.Store(&ls)
	return nil
}

// SetConfig puts f's limits in force while the Transport runs, in place
// of all those in force: the default, those of domains and patterns (from
// WithDomain too), and the server's and the global limits (a scope that f
// leaves out no longer applies). The next turn of each key follows its new
// limit, counting its earlier requests as SetLimit says, and so does every
// request already waiting; as SetLimit says, a new max_concurrent counts
// the requests in flight and a quota keeps its history. An invalid f
// changes nothing and
// is an error naming the domain and the field. What other options set
// (the key function, the limiter, WithMaxWait, WithMaxDomains,
// WithMaxPause, WithLoopbackExempt, WithRobots, WithLookup, WithLogger)
// does not change.
func (t *Transport) SetConfig(f *config.File) error {
	switch {
	case !t.made():
		return errNotMade
	case f == nil:
		return errors.New("polite: SetConfig: no config")
	}
	if err := f.Validate(); err != nil {
		return err
	}
	var entries []domainEntry
	for _, name := range slices.Sorted(maps.Keys(f.Domains)) {
		entries = append(entries, domainEntry{name: name, limit: f.Domains[name]})
	}
	def := f.Default.Inherit(config.DefaultLimit())
	ls, err := newLimitSet(&def, entries, f.Server, f.Global, t.keyFunc, t.maxPause)
	if err != nil {
		return err
	}
	t.limitsMu.Lock()
	defer t.limitsMu.Unlock()
	t.logChanges(t.limits.Load(), ls)
	t.limits.Store(ls)
	return nil
}

// logChanges logs, at Info, each limit that differs between old and new.
func (t *Transport) logChanges(old, new *limitSet) {
	if !t.logger.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	if !sameLimit(old.def, new.def) {
		t.logChange("default", new.def)
	}
	new.domains.Range(func(name string, l *config.Limit) bool {
		if was, ok := old.domains.Get(name); !ok || !sameLimit(was, l) {
			t.logChange(name, l)
		}
		return true
	})
	old.domains.Range(func(name string, _ *config.Limit) bool {
		if _, ok := new.domains.Get(name); !ok {
			t.logger.Info("polite: limit removed", "domain", name)
		}
		return true
	})
	for _, s := range []struct {
		name     string
		was, now *config.Limit
	}{{"server_config", old.server.configured(), new.server.configured()}, {"global_config", old.global.configured(), new.global.configured()}} {
		switch {
		case s.now == nil && s.was != nil:
			t.logger.Info("polite: limit removed", "domain", s.name)
		case s.now != nil && (s.was == nil || !sameLimit(s.was, s.now)):
			t.logChange(s.name, s.now)
		}
	}
}

func (t *Transport) logChange(name string, l *config.Limit) {
	t.logger.Info("polite: limit changed", limitAttrs(name, l)...)
}

// sameLimit reports whether a and b set the same rules.
func sameLimit(a, b *config.Limit) bool {
	return a == b || reflect.DeepEqual(*a, *b)
}

// logLimits logs the limits in force, once, at Info.
func (t *Transport) logLimits() {
	ctx := context.Background()
	if !t.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	ls := t.limits.Load()
	t.logger.Info("polite: limits in force", limitAttrs("default", ls.def)...)
	ls.domains.Range(func(name string, l *config.Limit) bool {
		t.logger.Info("polite: limits in force", limitAttrs(name, l)...)
		return true
	})
	for name, l := range map[string]*config.Limit{"server_config": ls.server.configured(), "global_config": ls.global.configured()} {
		if l != nil {
			t.logger.Info("polite: limits in force", limitAttrs(name, l)...)
		}
	}
}

func limitAttrs(domain string, l *config.Limit) []any {
	return []any{"domain", domain, "enabled", !l.Disabled, "rate", l.RequestsPerSecond, "burst", l.Burst,
		"min_delay", l.MinDelay, "jitter", l.Jitter, "max_concurrent", l.MaxConcurrent, "quotas", len(l.Quotas)}
}
