package polite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// resolveDomains normalises the configured domains and checks that each can
// be reached under keyFunc; each limit takes what it leaves out from def.
// An entry replaces those of earlier options for the same domain.
func resolveDomains(entries []domainEntry, keyFunc KeyFunc, def config.Limit) (map[string]*config.Limit, error) {
	limits := make(map[string]*config.Limit, len(entries))
	from := make(map[string]domainEntry, len(entries))
	for _, e := range entries {
		name, l := e.name, e.limit.Inherit(def)
		if name == "" {
			return nil, &config.FieldError{Domain: name, Field: "domains", Err: errors.New("domain name is empty")}
		}
		if err := l.Validate(name); err != nil {
			return nil, err
		}
		key, err := configKey(name, keyFunc)
		if err != nil {
			return nil, &config.FieldError{Domain: name, Field: "domains", Err: err}
		}
		if prev, dup := from[key]; dup && prev.option == e.option {
			return nil, &config.FieldError{Domain: name, Field: "domains", Err: fmt.Errorf("names the same domain, %q, as %q", key, prev.name)}
		}
		from[key] = e
		limits[key] = &l
	}
	return limits, nil
}

// configKey returns the key a configured domain name stands for. A name
// that is a host name is normalised as hosts are, if the key function
// keys a request to that host by that name; a name the key function can
// never produce, as it keys a request to that host by a parent domain
// (www.example.com under DomainKey), is an error. Any other name is a key
// as the key function writes it.
func configKey(name string, keyFunc KeyFunc) (string, error) {
	if asWritten, err := checkDomainName(name, keyFunc); asWritten || err != nil {
		return name, err
	}
	host, err := normalizeHost(name)
	if err != nil {
		return name, nil
	}
	probe, err := http.NewRequest(http.MethodGet, "http://"+hostForURL(host)+"/", nil)
	if err != nil {
		return "", errors.New("can never match: not a host name")
	}
	got, err := keyFunc(probe)
	switch {
	case err != nil || got == name:
		return name, nil
	case got == host:
		return host, nil
	case strings.HasSuffix(host, "."+got):
		return "", fmt.Errorf("can never match: the key function names its requests %q", got)
	}
	return name, nil
}

// setUpDomain makes d the domain of key, under its limit.
func (t *Transport) setUpDomain(d *domain, key string) {
	l, ok := t.limits[key]
	if !ok {
		l = t.defaultLimit
	}
	d.key, d.rule = key, t.rules[l]
	d.unpaced = l.Disabled || (t.loopbackExempt && isLoopback(key)) || key == noHostKey
	if l.MaxConcurrent > 0 && !d.unpaced {
		d.slots = make(chan struct{}, l.MaxConcurrent)
	}
}

// newDomain returns a domain of key that the table does not hold.
func (t *Transport) newDomain(key string) *domain {
	d := new(domain)
	t.setUpDomain(d, key)
	return d
}

// ruleOf returns the limiter.Rule that enforces l under the Transport's
// maximum pause.
func (t *Transport) ruleOf(l *config.Limit) *limiter.Rule {
	r := limiter.RuleOf(*l)
	r.MaxPause = t.maxPause
	return &r
}

// Limit returns the limit that paces domain: its own, or the default.
// domain is keyed as a request would be: a host name (www.example.com)
// or URL answers for its key (example.com under DomainKey).
func (t *Transport) Limit(domain string) config.Limit {
	if l, ok := t.limits[t.keyOf(domain)]; ok {
		return *l
	}
	return *t.defaultLimit
}

// logLimits logs the limits in force, once, at Info.
func (t *Transport) logLimits() {
	ctx := context.Background()
	if !t.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	t.logger.Info("polite: limits in force", limitAttrs("default", t.defaultLimit)...)
	for key, l := range t.limits {
		t.logger.Info("polite: limits in force", limitAttrs(key, l)...)
	}
}

func limitAttrs(domain string, l *config.Limit) []any {
	return []any{"domain", domain, "enabled", !l.Disabled, "rate", l.RequestsPerSecond, "burst", l.Burst,
		"min_delay", l.MinDelay, "jitter", l.Jitter, "max_concurrent", l.MaxConcurrent, "quotas", len(l.Quotas)}
}
