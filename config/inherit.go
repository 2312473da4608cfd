package config

import (
	"encoding/json"
	"reflect"
	"strings"
)

// Inherit returns l with what it leaves to the default taken from def. A
// limit that sets no pace of its own (no RequestsPerSecond, no MinDelay,
// not Disabled) takes def's RequestsPerSecond and MinDelay, and def's
// Burst unless it sets one; a RequestsPerSecond without a Burst gets burst
// 1. Every other field is l's own: in Go a zero is a value. So
// Limit{MaxConcurrent: 2} caps a domain at 2 in flight at the default's
// pace, and Limit{} is the default itself.
//
// A Transport applies Inherit to every limit it is given: to WithDefault's
// under DefaultLimit, and to each domain's under the default.
func (l Limit) Inherit(def Limit) Limit {
	if l.RequestsPerSecond == 0 && l.MinDelay == 0 && !l.Disabled {
		l.RequestsPerSecond, l.MinDelay = def.RequestsPerSecond, def.MinDelay
		if l.Burst == 0 {
			l.Burst = def.Burst
		}
	}
	if l.RequestsPerSecond > 0 && l.Burst == 0 {
		l.Burst = 1
	}
	return l
}

// inheritAbsent gives l, read from the JSON object data, def's value for
// each field the object leaves out. A burst_capacity left out beside a
// requests_per_second of 0 is 0: no bucket has no burst.
func inheritAbsent(l *Limit, data []byte, def Limit) error {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(data, &present); err != nil {
		return err
	}
	from, to := reflect.ValueOf(def), reflect.ValueOf(l).Elem()
	fields := reflect.TypeOf(limitJSON{})
	for i := range fields.NumField() {
		f := fields.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		// Each field of limitJSON has the name of the Limit field it
		// holds, which TestReadmeConfigTable checks.
		if _, ok := present[name]; !ok {
			if field := to.FieldByName(f.Name); field.IsValid() {
				field.Set(from.FieldByName(f.Name))
			}
		}
	}
	_, burstGiven := present["burst_capacity"]
	if _, rateGiven := present["requests_per_second"]; rateGiven && !burstGiven && l.RequestsPerSecond == 0 {
		l.Burst = 0
	}
	return nil
}
