package polite

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/names"
	"github.com/polite-go/polite/internal/pattern"
)

// resolveDomains checks the configured limits and turns each configured
// domain name into the key or pattern it stands for under keyFunc
// (names.Configured); each limit takes what it leaves out from def. An
// entry replaces those of earlier options for the same domain.
func resolveDomains(entries []domainEntry, keyFunc KeyFunc, def config.Limit) (*pattern.Table[*config.Limit], error) {
	limits := new(pattern.Table[*config.Limit])
	from := make(map[string]domainEntry, len(entries))
	for _, e := range entries {
		name, l := e.name, e.limit.Inherit(def)
		if err := pattern.Check(name); err != nil {
			return nil, &config.FieldError{Domain: name, Field: "domains", Err: err}
		}
		if err := l.Validate(name); err != nil {
			return nil, err
		}
		key, err := names.Configured(name, keyFunc)
		if err != nil {
			return nil, &config.FieldError{Domain: name, Field: "domains", Err: err}
		}
		if prev, dup := from[key]; dup && prev.option == e.option {
			return nil, &config.FieldError{Domain: name, Field: "domains", Err: fmt.Errorf("names the same domain, %q, as %q", key, prev.name)}
		}
		from[key] = e
		limits.Set(key, &l)
	}
	return limits, nil
}

// setUpDomain makes d the domain of key, under its limit.
func (t *Transport) setUpDomain(d *domain, key string) {
	d.key = key
	d.exempt = (t.loopbackExempt && names.Loopback(key)) || key == noHostKey
	t.currentLimit(d)
}

// newDomain returns a domain of key that the table does not hold.
func (t *Transport) newDomain(key string) *domain {
	d := new(domain)
	t.setUpDomain(d, key)
	return d
}

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
