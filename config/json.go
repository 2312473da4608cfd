package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"
)

// limitJSON is the JSON form of a Limit: durations are Go duration strings.
// Each field has the Go name of the Limit field it holds.
type limitJSON struct {
	RequestsPerSecond  float64     `json:"requests_per_second"`
	Burst              int         `json:"burst_capacity"`
	MinDelay           string      `json:"min_delay"`
	Jitter             string      `json:"jitter"`
	MaxConcurrent      int         `json:"max_concurrent"`
	Quotas             []quotaJSON `json:"quotas"`
	Disabled           bool        `json:"disabled"`
	Adaptive           bool        `json:"adaptive"`
	TargetConcurrency  float64     `json:"target_concurrency"`
	AdaptiveStartDelay string      `json:"adaptive_start_delay"`
	AdaptiveMaxDelay   string      `json:"adaptive_max_delay"`
	ErrorStatuses      *[]int      `json:"error_statuses"` // a pointer, to keep [] apart from absent and null
}

type quotaJSON struct {
	Requests int    `json:"requests"`
	Window   string `json:"window"`
}

// MarshalJSON writes l with the field names of the JSON file, every field
// included, so that Parse reads it back the same under any default_config.
func (l Limit) MarshalJSON() ([]byte, error) {
	out := limitJSON{
		RequestsPerSecond:  l.RequestsPerSecond,
		Burst:              l.Burst,
		MinDelay:           l.MinDelay.String(),
		Jitter:             l.Jitter.String(),
		MaxConcurrent:      l.MaxConcurrent,
		Disabled:           l.Disabled,
		Adaptive:           l.Adaptive,
		TargetConcurrency:  l.TargetConcurrency,
		Quotas:             []quotaJSON{},
		AdaptiveStartDelay: l.AdaptiveStartDelay.String(),
		AdaptiveMaxDelay:   l.AdaptiveMaxDelay.String(),
	}
	if l.ErrorStatuses != nil {
		out.ErrorStatuses = &l.ErrorStatuses
	}
	for _, q := range l.Quotas {
		out.Quotas = append(out.Quotas, quotaJSON{Requests: q.Requests, Window: q.Window.String()})
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads l strictly: unknown fields, keys given twice and
// wrong types are errors. A field left out is zero; Parse instead takes it
// from the default.
// It does not validate; Parse does.
func (l *Limit) UnmarshalJSON(data []byte) error {
	if key := duplicateKey(data); key != nil {
		return &fieldErr{joinPath(key), errDuplicateKey}
	}
	if err := checkFieldNames(data, limitFields, quotaFields); err != nil {
		return err
	}
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
		TargetConcurrency: in.TargetConcurrency,
	}
	var err error
	if out.MinDelay, err = parseDuration("min_delay", in.MinDelay); err != nil {
		return err
	}
	if out.Jitter, err = parseDuration("jitter", in.Jitter); err != nil {
		return err
	}
	if out.AdaptiveStartDelay, err = parseDuration("adaptive_start_delay", in.AdaptiveStartDelay); err != nil {
		return err
	}
	if out.AdaptiveMaxDelay, err = parseDuration("adaptive_max_delay", in.AdaptiveMaxDelay); err != nil {
		return err
	}
	if in.ErrorStatuses != nil {
		out.ErrorStatuses = append([]int{}, *in.ErrorStatuses...)
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

// describeDecodeError turns encoding/json's errors into ones that name the
// field in the file's terms.
func describeDecodeError(err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &fieldErr{strings.Trim(name, `"`), errors.New("unknown field")}
	}
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err
	}
	want := jsonKind(typeErr.Type.Kind())
	problem := fmt.Errorf("wrong type: got JSON %s, want %s", typeErr.Value, want)
	if want == "number" && strings.HasPrefix(typeErr.Value, "number") {
		problem = fmt.Errorf("%s is out of range", strings.TrimPrefix(typeErr.Value, "number "))
	}
	if typeErr.Field == "" {
		return problem
	}
	return &fieldErr{typeErr.Field, problem}
}

// atPosition returns err, the error of decoding data, with the line and
// column (from 1, in bytes) where data stops being JSON if err says it
// does: where a *json.SyntaxError was found, or the end of data for
// io.ErrUnexpectedEOF. Other errors are returned as they are.
func atPosition(data []byte, err error) error {
	var syntax *json.SyntaxError
	var at int
	switch {
	case errors.As(err, &syntax):
		at = max(int(syntax.Offset)-1, 0) // the byte that could not be read
	case errors.Is(err, io.ErrUnexpectedEOF):
		at = len(data)
	default:
		return err
	}
	at = min(at, len(data))
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	column := at - bytes.LastIndexByte(data[:at], '\n')
	return fmt.Errorf("line %d, column %d: %w", line, column, err)
}

// jsonKind names the JSON value that a Go value of kind k is read from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return k.String()
}

// The JSON names of a limit's and a quota's fields, as their tags say.
var limitFields, quotaFields = jsonNames(limitJSON{}), jsonNames(quotaJSON{})

func jsonNames(v any) []string {
	t := reflect.TypeOf(v)
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

// checkFieldNames rejects field names that encoding/json would match only
// case-insensitively, such as "Burst_Capacity", in a limit and its quotas.
// Other shape errors are left to the decoder.
func checkFieldNames(data []byte, limit, quota []string) error {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return nil
	}
	for _, name := range sortedKeys(fields) {
		raw := fields[name]
		if !slices.Contains(limit, name) {
			return &fieldErr{name, errors.New("unknown field")}
		}
		if name != "quotas" {
			continue
		}
		var quotas []map[string]json.RawMessage
		if json.Unmarshal(raw, &quotas) != nil {
			continue
		}
		for i, q := range quotas {
			for _, qname := range sortedKeys(q) {
				if !slices.Contains(quota, qname) {
					return &fieldErr{fmt.Sprintf("quotas[%d].%s", i, qname), errors.New("unknown field")}
				}
			}
		}
	}
	return nil
}

// errDuplicateKey is the error for a key given twice in one JSON object.
// encoding/json would keep the last value without a word.
var errDuplicateKey = errors.New("duplicate key")

// maxKeyDepth is how deep duplicateKey looks. No valid file nests objects
// and arrays more than four deep (domains, a domain, quotas, a quota), so
// anything deeper is an error the decoder reports anyway.
const maxKeyDepth = 16

// duplicateKey returns the path to the first key that appears twice in one
// object of the JSON value data, as keys and "[i]" array indices, such as
// ["domains", "a.com", "quotas", "[1]", "window"]; nil if there is none.
// Keys compare as encoding/json decodes them, escapes resolved and case
// kept. Input that is not JSON is left to the decoder.
func duplicateKey(data []byte) []string {
	type container struct {
		keys  map[string]bool // seen in this object; nil for an array
		key   string          // the object's latest key
		index int             // the array's current element
		inKey bool            // an object expecting a key or its end
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*container
	path := func(last string) []string {
		var p []string
		for _, c := range stack[:len(stack)-1] {
			if c.keys != nil {
				p = append(p, c.key)
			} else {
				p = append(p, fmt.Sprintf("[%d]", c.index))
			}
		}
		return append(p, last)
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if n := len(stack); n > 0 && stack[n-1].inKey {
			if key, ok := tok.(string); ok {
				top := stack[n-1]
				if top.keys[key] {
					return path(key)
				}
				top.keys[key] = true
				top.key, top.inKey = key, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) == maxKeyDepth {
				return nil
			}
			c := &container{}
			if tok == json.Delim('{') {
				c.keys, c.inKey = map[string]bool{}, true
			}
			stack = append(stack, c)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value has ended: the one of the enclosing key or element.
		if len(stack) == 0 {
			return nil
		}
		if top := stack[len(stack)-1]; top.keys != nil {
			top.inKey = true
		} else {
			top.index++
		}
	}
}

// joinPath writes a path from duplicateKey as the config's errors name
// fields: "quotas[1].window".
func joinPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}
