package polite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/pattern"
)

// resolveDomains normalises the configured domains and patterns and checks
// that each can be reached under keyFunc; each limit takes what it leaves
// out from def. An entry replaces those of earlier options for the same
// domain.
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
		key, err := configName(name, keyFunc)
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

// configName returns the key or the pattern a configured name stands for,
// as configKey and configPattern say.
func configName(name string, keyFunc KeyFunc) (string, error) {
	if parent, ok := pattern.Parent(name); ok {
		return configPattern(parent, keyFunc)
	}
	return configKey(name, keyFunc)
}

// configPattern returns the pattern of the keys under parent, a host name
// (pattern.Check), normalised as hosts are. A pattern whose keys the key
// function can never produce, as it keys a request to a host under parent
// by parent or by one of its own parents (*.example.com under DomainKey),
// is an error.
func configPattern(parent string, keyFunc KeyFunc) (string, error) {
	host, err := normalizeHost(parent)
	if err != nil {
		return "", fmt.Errorf("can never match: %w", err)
	}
	probe, err := http.NewRequest(http.MethodGet, "http://x."+hostForURL(host)+"/", nil)
	if err != nil {
		return "", errors.New("can never match: not a host name")
	}
	got, err := keyFunc(probe)
	if err == nil && under(host, got) {
		return "", fmt.Errorf("can never match: the key function names requests to its hosts %q (write %q to limit them all)", got, got)
	}
	return pattern.Of(host), nil
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
	case under(host, got) || under(probe.URL.Hostname(), got):
		// Keyed by its host, or a parent: a name that is more than a
		// host (a.com?q) is never a key.
		return "", fmt.Errorf("can never match: the key function names its requests %q", got)
	}
	return name, nil
}

// under reports whether host is under the domain parent.
func under(host, parent string) bool {
	return strings.HasSuffix(host, "."+parent) || strings.EqualFold(host, parent)
}

// setUpDomain makes d the domain of key, under its limit.
func (t *Transport) setUpDomain(d *domain, key string) {
	d.key = key
	d.exempt = (t.loopbackExempt && isLoopback(key)) || key == noHostKey
	t.currentPace(&d.pace, scopeDomain, key)
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
	ls := t.limits.Load()
	if l, ok := ls.domains.Lookup(t.keyOf(domain)); ok {
		return *l
	}
	return *ls.def
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
	for name, l := range map[string]*config.Limit{"server_config": ls.server, "global_config": ls.global} {
		if l != nil {
			t.logger.Info("polite: limits in force", limitAttrs(name, l)...)
		}
	}
}

func limitAttrs(domain string, l *config.Limit) []any {
	return []any{"domain", domain, "enabled", !l.Disabled, "rate", l.RequestsPerSecond, "burst", l.Burst,
		"min_delay", l.MinDelay, "jitter", l.Jitter, "max_concurrent", l.MaxConcurrent, "quotas", len(l.Quotas)}
}
