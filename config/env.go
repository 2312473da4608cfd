package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// LimitFromEnv returns base with the fields that environment variables
// set, so that every worker of a deployment can take its limit from the
// same place. With prefix "APP" it reads
//
//	APP_RATE_LIMIT       requests_per_second, a number: 3, 0.5
//	APP_RATE_BURST       burst_capacity, a whole number: 5
//	APP_MIN_DELAY        min_delay, a Go duration: 250ms, 1.5s
//	APP_JITTER           jitter, a Go duration
//	APP_MAX_CONCURRENT   max_concurrent, a whole number
//
// A variable that is unset or empty keeps base's value. The prefix is
// followed by "_" unless it is empty or already ends with one. The result
// is validated: a value that cannot be read, or that makes the limit
// invalid, is an error naming the variable and what it holds.
//
//	base := config.DefaultLimit()
//	def, err := config.LimitFromEnv("APP", base) // APP_RATE_LIMIT=3 APP_RATE_BURST=5
func LimitFromEnv(prefix string, base Limit) (Limit, error) {
	return limitFromLookup(prefix, base, os.LookupEnv)
}

// limitFromLookup is LimitFromEnv reading the variables through lookup,
// which returns a variable's value and whether it is set, as os.LookupEnv
// does.
func limitFromLookup(prefix string, base Limit, lookup func(name string) (string, bool)) (Limit, error) {
	if prefix != "" && !strings.HasSuffix(prefix, "_") {
		prefix += "_"
	}
	l := base
	values := map[string]string{} // field's JSON name -> what its variable holds
	for _, v := range envVars {
		name := prefix + v.suffix
		raw, _ := lookup(name)
		value := strings.TrimSpace(raw)
		values[v.field] = value
		if value == "" {
			continue
		}
		if err := v.set(&l, value); err != nil {
			return Limit{}, envError(name, raw, err)
		}
	}
	if err := l.Validate("environment"); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			for _, v := range envVars {
				if v.field == fe.Field {
					return Limit{}, envError(prefix+v.suffix, values[v.field], fe.Err)
				}
			}
		}
		return Limit{}, err
	}
	return l, nil
}

// envError is the error of variable name, which holds value, for err.
func envError(name, value string, err error) error {
	if value == "" {
		return fmt.Errorf("config: %s (not set): %w", name, err)
	}
	return fmt.Errorf("config: %s=%q: %w", name, value, err)
}

// envVar is one variable LimitFromEnv reads: its name after the prefix,
// the JSON name of the field it sets, and how it sets it.
type envVar struct {
	suffix, field string
	set           func(l *Limit, value string) error
}

var envVars = []envVar{
	{"RATE_LIMIT", "requests_per_second", func(l *Limit, s string) (err error) {
		l.RequestsPerSecond, err = parseRate(s)
		return err
	}},
	{"RATE_BURST", "burst_capacity", func(l *Limit, s string) (err error) {
		l.Burst, err = parseCount(s)
		return err
	}},
	{"MIN_DELAY", "min_delay", func(l *Limit, s string) (err error) {
		l.MinDelay, err = parseEnvDuration(s)
		return err
	}},
	{"JITTER", "jitter", func(l *Limit, s string) (err error) {
		l.Jitter, err = parseEnvDuration(s)
		return err
	}},
	{"MAX_CONCURRENT", "max_concurrent", func(l *Limit, s string) (err error) {
		l.MaxConcurrent, err = parseCount(s)
		return err
	}},
}

func parseRate(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("not a number such as 3 or 0.5")
	}
	return f, nil
}

func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("not a whole number such as 5")
	}
	return n, nil
}

func parseEnvDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New(`not a duration such as "250ms" or "1.5s"`)
	}
	return d, nil
}
