package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/internal/text"
)

// Object is a JSON object held as JSON-normal Go values: nil, bool, string,
// json.Number, []any and map[string]any. Payloads are Objects so that every
// backend stores and compares them the same way: numbers keep their exact
// text, and Equal compares numbers by value (2 equals 2.0).
type Object map[string]any

// NormalizeObject converts v (a map, a struct, raw JSON bytes or an Object
// built by hand) to a JSON-normal Object. It returns an error wrapping
// ErrInvalidArgument when v is not a JSON object, holds invalid UTF-8 or a
// repeated key, or nests deeper than jsonx.MaxDepth.
func NormalizeObject(v any) (Object, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return ParseObject(x)
	case []byte:
		return ParseObject(x)
	case map[string]any, Object:
		// Checked before encoding: json.Marshal would silently replace bad
		// UTF-8 with U+FFFD.
		if s, ok := jsonx.InvalidUTF8(x); !ok {
			return nil, fmt.Errorf("%w: payload holds a string that is not valid UTF-8: %q", ErrInvalidArgument, text.Clip(s, 40))
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: payload is not JSON: %v", ErrInvalidArgument, err)
	}
	return ParseObject(raw)
}

// ParseObject decodes raw JSON into an Object. It returns an error wrapping
// ErrInvalidArgument when raw is not a single JSON object, or breaks a rule
// of DecodeJSON (invalid UTF-8, a repeated key, too deep); "null" yields nil.
func ParseObject(raw []byte) (Object, error) {
	v, err := jsonx.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: payload is not valid JSON: %v", ErrInvalidArgument, err)
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: payload is a JSON %s, not an object", ErrInvalidArgument, jsonx.Kind(v))
	}
	return Object(m), nil
}

// Clone returns a deep copy of o.
func (o Object) Clone() Object {
	if o == nil {
		return nil
	}
	return Object(cloneValue(map[string]any(o)).(map[string]any))
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneValue(e)
		}
		return m
	case Object:
		return map[string]any(x.Clone())
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneValue(e)
		}
		return s
	}
	return v
}

// String returns o's value at key, or "" when it is absent or not a string.
func (o Object) String(key string) string {
	s, _ := o[key].(string)
	return s
}

// Int returns o's value at key as an int64, and whether it is an integer.
func (o Object) Int(key string) (int64, bool) {
	return jsonx.AsInt(o[key])
}

// Equal reports whether a and b hold the same JSON: the same keys, and equal
// values, numbers compared by value.
func (o Object) Equal(p Object) bool {
	return (o == nil) == (p == nil) && jsonx.Equal(map[string]any(o), map[string]any(p))
}

// leadingKeys are written first, in this order, when an Object is encoded;
// the remaining keys follow sorted. This keeps files and record JSON stable
// and puts the fields a reader looks for first.
var leadingKeys = []string{"address", "t", "state", "default_context", "config_id"}

// MarshalJSON encodes o deterministically: the keys of leadingKeys first,
// then the others in sorted order (nested objects sorted too).
func (o Object) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("null"), nil
	}
	rank := func(k string) int {
		if i := slices.Index(leadingKeys, k); i >= 0 {
			return i
		}
		return len(leadingKeys)
	}
	keys := slices.SortedFunc(maps.Keys(o), func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(o[k])
		if err != nil {
			return nil, fmt.Errorf("encode payload key %q: %w", k, err)
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON decodes a JSON object keeping numbers exact.
func (o *Object) UnmarshalJSON(b []byte) error {
	obj, err := ParseObject(b)
	if err != nil {
		return err
	}
	*o = obj
	return nil
}
