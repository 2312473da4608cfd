package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeConfigTable checks the README's configuration table against
// Limit and its JSON form: one row per field, with its JSON and Go names.
func TestReadmeConfigTable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `([A-Za-z]+)` \\|")
	documented := map[string]string{} // JSON name -> Go name
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		documented[m[1]] = m[2]
	}
	want := map[string]string{}
	js := reflect.TypeOf(limitJSON{})
	for i := range js.NumField() {
		f := js.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		_, ok := reflect.TypeOf(Limit{}).FieldByName(f.Name)
		require.True(t, ok, "limitJSON.%s has no Limit field of that name", f.Name)
		want[name] = f.Name
	}
	assert.Equal(t, want, documented)
}
