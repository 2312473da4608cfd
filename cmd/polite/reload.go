package main

import (
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// reloadOnHangup makes SIGHUP reload the -config file into t, until the
// function it returns is called.
func reloadOnHangup(t *polite.Transport, f *fetchFlags, load func(string) (*config.File, error), stderr io.Writer) (stop func()) {
	var mu sync.Mutex // one reload at a time
	reloadNow := func() {
		mu.Lock()
		defer mu.Unlock()
		reload(t, f, load, stderr)
	}
	onHangup.Store(&reloadNow)
	return func() { onHangup.Store(nil) }
}

// reload puts the -config file's limits, -rate and -burst over its
// default, in force in t, and writes to stderr what changed; a file that
// cannot be read or used changes nothing, and says why.
func reload(t *polite.Transport, f *fetchFlags, load func(string) (*config.File, error), stderr io.Writer) {
	file, err := f.loadConfig(load)
	if err == nil {
		err = t.SetConfig(file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "polite fetch: SIGHUP: the limits in force stay: %v\n", err)
		return
	}
	changed := configChanges(f.file, file)
	f.file = file
	if len(changed) == 0 {
		fmt.Fprintf(stderr, "polite fetch: SIGHUP: reloaded %s: no limit changed\n", f.config)
		return
	}
	for _, c := range changed {
		fmt.Fprintf(stderr, "polite fetch: SIGHUP: reloaded %s: %s\n", f.config, c)
	}
}

// configChanges lists what differs from old to new, one line per limit.
func configChanges(old, new *config.File) []string {
	var out []string
	describe := func(name string, was, now *config.Limit) {
		switch {
		case was == nil && now == nil, was != nil && now != nil && reflect.DeepEqual(*was, *now):
		case now == nil:
			out = append(out, name+" removed")
		default:
			text, _ := now.MarshalJSON()
			out = append(out, fmt.Sprintf("%s now %s", name, text))
		}
	}
	describe("default_config", &old.Default, &new.Default)
	names := maps.Clone(old.Domains)
	if names == nil {
		names = map[string]config.Limit{}
	}
	maps.Copy(names, new.Domains)
	for _, name := range slices.Sorted(maps.Keys(names)) {
		describe(name, limitOf(old.Domains, name), limitOf(new.Domains, name))
	}
	describe("server_config", old.Server, new.Server)
	describe("global_config", old.Global, new.Global)
	return out
}

func limitOf(m map[string]config.Limit, name string) *config.Limit {
	if l, ok := m[name]; ok {
		return &l
	}
	return nil
}
