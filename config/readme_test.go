package config

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeConfigTable checks the README's configuration table against
// Limit and its JSON form: one row per field, with its JSON and Go names,
// and as its default the JSON value that a field left out of
// default_config takes.
func TestReadmeConfigTable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `([A-Za-z]+)` \\| `([^`]*)` \\|")
	type entry struct{ goName, def string }
	documented := map[string]entry{} // JSON name -> Go name and default
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		documented[m[1]] = entry{m[2], m[3]}
	}
	builtIn, err := Parse([]byte(`{"default_config": {}}`))
	require.NoError(t, err)
	var defaults map[string]json.RawMessage
	data, err := json.Marshal(builtIn.Default)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &defaults))
	want := map[string]entry{}
	js := reflect.TypeOf(limitJSON{})
	for i := range js.NumField() {
		f := js.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		_, ok := reflect.TypeOf(Limit{}).FieldByName(f.Name)
		require.True(t, ok, "limitJSON.%s has no Limit field of that name", f.Name)
		want[name] = entry{f.Name, string(defaults[name])}
	}
	assert.Equal(t, want, documented)
}

// TestReadmeConfigExample checks that the README's JSON example parses.
func TestReadmeConfigExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	example := regexp.MustCompile("(?s)## Configuration.*?```json\n(.*?)```").FindSubmatch(readme)
	require.NotNil(t, example, "no JSON example under ## Configuration")
	_, err = Parse(example[1])
	assert.NoError(t, err)
}
