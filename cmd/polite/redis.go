package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter/redislimiter"
)

// parseRedisURL checks every part of a -redis URL, then has go-redis turn
// it into client options. go-redis checks option values less than it
// uses them: a negative pool_size panics in redis.NewClient, and a
// max_retries below -1 makes every command return nothing without being
// sent. So every option is checked here first, against the ranges in
// redisOptions, and an option that is unknown or given twice is an error.
// Nothing is sent to Redis.
func parseRedisURL(raw string) (*redis.Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %w", errors.Unwrap(err)) // without the URL, which may hold a password
	}
	switch {
	case u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix":
		return nil, fmt.Errorf("scheme %q: want redis://host:port/db, rediss:// or unix:///path", u.Scheme)
	case u.Opaque != "":
		return nil, fmt.Errorf("no // after %s: (want %s://host:port/db)", u.Scheme, u.Scheme)
	case u.Scheme == "unix" && strings.TrimSpace(u.Path) == "":
		return nil, errors.New("unix: no socket path (want unix:///path/to/redis.sock)")
	}
	if port := u.Port(); port != "" && u.Scheme != "unix" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %s: must be between 1 and 65535", port)
		}
	}
	if u.Scheme != "unix" {
		db := strings.Trim(u.Path, "/")
		if strings.Contains(db, "/") {
			return nil, fmt.Errorf("path %q: want /db, a database number", u.Path)
		}
		if db != "" {
			if err := checkInt(db, 0, math.MaxInt32); err != nil {
				return nil, fmt.Errorf("database %q: %w", db, err)
			}
		}
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(query)) {
		if err := checkRedisOption(u.Scheme, name, query); err != nil {
			return nil, fmt.Errorf("option %s: %w", name, err)
		}
	}
	return redis.ParseURL(raw)
}

// checkRedisOption checks the option name of a -redis URL with the given
// scheme, whose query is query.
func checkRedisOption(scheme, name string, query url.Values) error {
	check, ok := redisOptions[name]
	if !ok {
		return fmt.Errorf("unknown (known options: %s)", strings.Join(slices.Sorted(maps.Keys(redisOptions)), ", "))
	}
	values := query[name]
	if len(values) > 1 {
		return errors.New("given more than once")
	}
	if alias := redisAliases[name]; alias != "" && query.Has(alias) {
		return fmt.Errorf("given with %s, which is the same option", alias)
	}
	if name == "skip_verify" && scheme != "rediss" {
		return errors.New("only with rediss://")
	}
	if values[0] == "" {
		return nil // go-redis's default
	}
	return check(values[0])
}

// The limits of the options of a -redis URL. They are wide enough for any
// real use and keep go-redis away from the values it mishandles.
const (
	maxRedisConns    = 10_000         // pool_size and the other connection counts
	maxRedisRetries  = 100            // max_retries
	maxRedisDuration = 24 * time.Hour // every duration option
	maxClientName    = 128            // client_name, in bytes
)

// redisOptions are the options a -redis URL may set, with a check of
// their values, as go-redis's ParseURL reads them. A value that is empty
// means go-redis's default and is not checked.
var redisOptions = map[string]func(value string) error{
	"db":       func(s string) error { return checkInt(s, 0, math.MaxInt32) },
	"protocol": func(s string) error { return checkInt(s, 2, 3) },
	"client_name": func(s string) error {
		if len(s) > maxClientName {
			return fmt.Errorf("longer than %d bytes", maxClientName)
		}
		if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return fmt.Errorf("%q: Redis takes a name of printable ASCII without spaces", s)
		}
		return nil
	},
	"max_retries":              func(s string) error { return checkInt(s, -1, maxRedisRetries) },
	"min_retry_backoff":        redisDuration(true),
	"max_retry_backoff":        redisDuration(true),
	"dial_timeout":             redisDuration(false),
	"read_timeout":             redisDuration(true),
	"write_timeout":            redisDuration(true),
	"pool_fifo":                checkBool,
	"pool_size":                func(s string) error { return checkInt(s, 1, maxRedisConns) },
	"pool_timeout":             redisDuration(false),
	"min_idle_conns":           func(s string) error { return checkInt(s, 0, maxRedisConns) },
	"max_idle_conns":           func(s string) error { return checkInt(s, 0, maxRedisConns) },
	"max_active_conns":         func(s string) error { return checkInt(s, 0, maxRedisConns) },
	"max_concurrent_dials":     func(s string) error { return checkInt(s, 0, maxRedisConns) },
	"conn_max_idle_time":       redisDuration(true),
	"idle_timeout":             redisDuration(true),
	"conn_max_lifetime":        redisDuration(true),
	"max_conn_age":             redisDuration(true),
	"conn_max_lifetime_jitter": redisDuration(true),
	"skip_verify":              checkBool,
}

// redisAliases pairs the options that set the same field: go-redis reads
// one and calls the other unknown.
var redisAliases = map[string]string{
	"conn_max_idle_time": "idle_timeout",
	"idle_timeout":       "conn_max_idle_time",
	"conn_max_lifetime":  "max_conn_age",
	"max_conn_age":       "conn_max_lifetime",
}

// checkInt checks that s is a whole number in [lo, hi].
func checkInt(s string, lo, hi int) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("%q: must be a whole number from %d to %d", s, lo, hi)
	}
	return nil
}

// checkBool checks a boolean as go-redis reads it.
func checkBool(s string) error {
	switch s {
	case "true", "false", "1", "0":
		return nil
	}
	return fmt.Errorf("%q: must be true or false", s)
}

// redisDuration returns a check of a duration option: a Go duration such
// as 500ms, or a whole number of seconds, at most maxRedisDuration. With
// disable, zero or a negative value is allowed too: go-redis reads it as
// "off" (no timeout, no backoff).
func redisDuration(disable bool) func(string) error {
	return func(s string) error {
		d, err := time.ParseDuration(s)
		if n, nerr := strconv.ParseInt(s, 10, 64); nerr == nil {
			d, err = time.Duration(min(max(n, -1), math.MaxInt64/int64(time.Second)))*time.Second, nil
		}
		switch {
		case err != nil:
			return fmt.Errorf("%q: must be a duration such as 500ms or 3s, or a whole number of seconds", s)
		case d <= 0 && !disable:
			return fmt.Errorf("%q: must be positive", s)
		case d > maxRedisDuration:
			return fmt.Errorf("%q: must be at most %v", s, maxRedisDuration)
		}
		return nil
	}
}

// sharedLimiter returns a Redis limiter for the Redis that opt describes;
// closing it closes its client too. go-redis's own log goes to logger at
// Debug (see redisLog).
func sharedLimiter(opt *redis.Options, logger *slog.Logger) (*redisLimiter, error) {
	redis.SetLogger(redisLog{logger})
	client := redis.NewClient(opt)
	lim, err := redislimiter.New(client, redislimiter.WithLogger(logger))
	if err != nil {
		client.Close()
		return nil, err
	}
	return &redisLimiter{Limiter: lim, client: client}, nil
}

// redisLimiter is a redislimiter.Limiter with the client it owns.
type redisLimiter struct {
	*redislimiter.Limiter
	client *redis.Client
}

func (l *redisLimiter) Close() error {
	return errors.Join(l.Limiter.Close(), l.client.Close())
}

// redisLog hands go-redis's own log lines (a dial that failed, a pool
// that is closing) to logger at Debug, so that they show only with -v:
// while Redis is away, the command prints the Limiter's one warning
// rather than a few lines a second.
type redisLog struct{ logger *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.logger.DebugContext(ctx, "go-redis: "+strings.TrimSpace(fmt.Sprintf(format, v...)))
}
