package polite

import (
	"fmt"
	"sync"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/names"
	"github.com/polite-go/polite/internal/pattern"
	"github.com/polite-go/polite/internal/scopes"
)

// limitSet is the limits in force: the default, those of domains and
// patterns, and those of the scopes. It is not changed once made;
// SetLimit and SetConfig replace it.
type limitSet struct {
	def     *config.Limit
	domains *pattern.Table[*config.Limit]
	server  *limitInForce // nil: no server scope
	global  *limitInForce // nil: no global scope
	inForce *sync.Map     // a domain's *config.Limit -> its *limitInForce, shared by the keys it paces
}

// newLimitSet checks the limits and the domains' names, as resolveDomains
// does, and returns them as a limitSet whose rules cap a server's pause at
// maxPause.
func newLimitSet(def *config.Limit, domains []domainEntry, server, global *config.Limit, keyFunc KeyFunc, maxPause time.Duration) (*limitSet, error) {
	if err := def.Validate("default_config"); err != nil {
		return nil, err
	}
	serverLimit, err := newScopeLimit("server_config", server, maxPause)
	if err != nil {
		return nil, err
	}
	globalLimit, err := newScopeLimit("global_config", global, maxPause)
	if err != nil {
		return nil, err
	}
	table, err := resolveDomains(domains, keyFunc, *def)
	if err != nil {
		return nil, err
	}
	return &limitSet{def: def, domains: table, server: serverLimit, global: globalLimit, inForce: new(sync.Map)}, nil
}

// newScopeLimit checks the limit of the scope named as its config field
// is, nil if none, and returns it in force with a rate's burst filled in.
// It takes nothing from the default.
func newScopeLimit(field string, l *config.Limit, maxPause time.Duration) (*limitInForce, error) {
	if l == nil {
		return nil, nil
	}
	own := l.Inherit(config.Limit{})
	if err := own.Validate(field); err != nil {
		return nil, err
	}
	return newLimitInForce(&own, maxPause, nil), nil
}

// domainLimit returns the limit of the domain key: its own, its
// pattern's, or the default.
func (ls *limitSet) domainLimit(key string) *config.Limit {
	if l, ok := ls.domains.Lookup(key); ok {
		return l
	}
	return ls.def
}

// scopeLimit returns the limit in force of the scope named name
// (scopes.Server or scopes.Global); nil if that scope is not in force.
func (ls *limitSet) scopeLimit(name string) *limitInForce {
	if name == scopes.Server {
		return ls.server
	}
	return ls.global
}

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
