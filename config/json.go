package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// limitJSON is the JSON form of a Limit: durations are Go duration strings.
type limitJSON struct {
	RequestsPerSecond float64     `json:"requests_per_second,omitempty"`
	Burst             int         `json:"burst_capacity,omitempty"`
	MinDelay          string      `json:"min_delay,omitempty"`
	Jitter            string      `json:"jitter,omitempty"`
	MaxConcurrent     int         `json:"max_concurrent,omitempty"`
	Quotas            []quotaJSON `json:"quotas,omitempty"`
	Disabled          bool        `json:"disabled,omitempty"`
	Adaptive          bool        `json:"adaptive,omitempty"`
}

type quotaJSON struct {
	Requests int    `json:"requests"`
	Window   string `json:"window"`
}

// MarshalJSON writes l with the field names of the JSON file.
func (l Limit) MarshalJSON() ([]byte, error) {
	out := limitJSON{
		RequestsPerSecond: l.RequestsPerSecond,
		Burst:             l.Burst,
		MinDelay:          durationString(l.MinDelay),
		Jitter:            durationString(l.Jitter),
		MaxConcurrent:     l.MaxConcurrent,
		Disabled:          l.Disabled,
		Adaptive:          l.Adaptive,
	}
	for _, q := range l.Quotas {
		out.Quotas = append(out.Quotas, quotaJSON{Requests: q.Requests, Window: q.Window.String()})
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads l strictly: unknown fields and wrong types are errors.
// It does not validate; Parse does.
func (l *Limit) UnmarshalJSON(data []byte) error {
	var in limitJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return describeDecodeError(err)
	}
	out := Limit{
		RequestsPerSecond: in.RequestsPerSecond,
		Burst:             in.Burst,
		MaxConcurrent:     in.MaxConcurrent,
		Disabled:          in.Disabled,
		Adaptive:          in.Adaptive,
	}
	var err error
	if out.MinDelay, err = parseDuration("min_delay", in.MinDelay); err != nil {
		return err
	}
	if out.Jitter, err = parseDuration("jitter", in.Jitter); err != nil {
		return err
	}
	for i, q := range in.Quotas {
		window, err := parseDuration(fmt.Sprintf("quotas[%d].window", i), q.Window)
		if err != nil {
			return err
		}
		out.Quotas = append(out.Quotas, Quota{Requests: q.Requests, Window: window})
	}
	*l = out
	return nil
}

// fieldErr is an error about one field, before the domain is known.
type fieldErr struct {
	field string
	err   error
}

func (e *fieldErr) Error() string { return e.field + ": " + e.err.Error() }
func (e *fieldErr) Unwrap() error { return e.err }

func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, &fieldErr{field, fmt.Errorf("not a duration such as \"1.5s\": %q", s)}
	}
	return d, nil
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// describeDecodeError turns encoding/json's errors into ones that name the
// field in the file's terms.
func describeDecodeError(err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &fieldErr{strings.Trim(name, `"`), errors.New("unknown field")}
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return &fieldErr{typeErr.Field, fmt.Errorf("wrong type: got JSON %s, want %s", typeErr.Value, jsonKind(typeErr.Type.Kind().String()))}
	}
	return err
}

func jsonKind(goKind string) string {
	switch goKind {
	case "float64", "int":
		return "number"
	case "bool":
		return "true or false"
	case "slice":
		return "array"
	}
	return goKind
}
