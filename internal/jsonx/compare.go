package jsonx

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

var mapType = reflect.TypeFor[map[string]any]()

// asMap returns v as a map[string]any when it is one, or of a type defined
// as one (an Object).
func asMap(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Map || !rv.Type().ConvertibleTo(mapType) {
		return nil, false
	}
	return rv.Convert(mapType).Interface().(map[string]any), true
}

// Kind names the JSON type of v, a value as encoding/json decodes it with
// UseNumber ("null", "array", "object", "string", "number", "boolean"),
// for error messages.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	if _, ok := asMap(v); ok {
		return "object"
	}
	return "value"
}

// AsInt returns v as an int64 when v is an integral JSON number.
func AsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true
		}
		if d, ok := parseDecimal(string(x)); ok {
			return d.int64()
		}
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

// Equal reports whether two JSON-normal values are equal, comparing
// numbers by value whatever their Go type.
func Equal(a, b any) bool {
	if x, ok := a.(json.Number); ok && b == x {
		return true // the same text: no need to read it
	}
	if da, ok := asDecimal(a); ok {
		db, ok := asDecimal(b)
		return ok && da == db
	}
	switch x := a.(type) {
	case json.Number:
		// Not a number's text (a Go caller's json.Number): compared as text.
		y, ok := b.(json.Number)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, Equal)
	case nil, bool, string:
		return a == b
	}
	x, okA := asMap(a) // JSON objects with the same keys and equal values
	y, okB := asMap(b)
	return okA && okB && maps.EqualFunc(x, y, Equal)
}

// InvalidUTF8 returns the first key or string in v, a JSON-normal value,
// that is not valid UTF-8 (which JSON encoding would silently rewrite).
func InvalidUTF8(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if s, ok := InvalidUTF8(e); !ok {
				return s, false
			}
		}
		return "", true
	}
	m, ok := asMap(v)
	if !ok {
		return "", true
	}
	for k, e := range m {
		if !utf8.ValidString(k) {
			return k, false
		}
		if s, ok := InvalidUTF8(e); !ok {
			return s, false
		}
	}
	return "", true
}
