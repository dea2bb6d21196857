package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"nameservice.dev/nameservice/internal/text"
)

// validText reads JSON text that json.Valid has accepted: it need not
// check the grammar, only build values, which spares encoding/json's
// Decoder (a buffer and a scanner per call, tens of allocations for a
// value of a few bytes). Decode and EachMember use it; whatever is
// not valid goes the Decoder's way, whose errors name the problem.
type validText struct {
	b []byte
	i int
}

func (t *validText) space() {
	for t.i < len(t.b) {
		switch t.b[t.i] {
		case ' ', '\t', '\n', '\r':
			t.i++
		default:
			return
		}
	}
}

// value decodes the value at t.i as encoding/json does with UseNumber,
// refusing an object key that repeats.
func (t *validText) value() (any, error) {
	t.space()
	switch c := t.b[t.i]; {
	case c == '{':
		m := map[string]any{}
		err := t.members(func(k string, _ int) error {
			if _, dup := m[k]; dup {
				return fmt.Errorf("an object has the key %q twice", text.Clip(k, 64))
			}
			v, err := t.value()
			m[k] = v
			return err
		})
		return m, err
	case c == '[':
		l := []any{}
		t.i++
		t.space()
		if t.b[t.i] == ']' {
			t.i++
			return l, nil
		}
		for {
			v, err := t.value()
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			t.space()
			t.i++ // ',' or ']'
			if t.b[t.i-1] == ']' {
				return l, nil
			}
		}
	case c == '"':
		return t.str()
	case c == 't':
		t.i += 4
		return true, nil
	case c == 'f':
		t.i += 5
		return false, nil
	case c == 'n':
		t.i += 4
		return nil, nil
	}
	start := t.i
	t.skip()
	return json.Number(t.b[start:t.i]), nil
}

// members calls fn for each member of the object at t.i with its key,
// and t.i at its value, which fn must read (value or skip).
func (t *validText) members(fn func(key string, at int) error) error {
	t.i++ // '{'
	t.space()
	if t.b[t.i] == '}' {
		t.i++
		return nil
	}
	for {
		t.space()
		k, err := t.str()
		if err != nil {
			return err
		}
		t.space()
		t.i++ // ':'
		t.space()
		if err := fn(k, t.i); err != nil {
			return err
		}
		t.space()
		t.i++ // ',' or '}'
		if t.b[t.i-1] == '}' {
			return nil
		}
	}
}

// str decodes the string at t.i. Only one with escapes or bytes that are
// not UTF-8 goes through encoding/json (its unquoting of \u surrogate pairs
// and its replacement of bad bytes by U+FFFD are the reference); a \u
// escape of a lone surrogate, which encoding/json turns into U+FFFD, names
// no character and is refused.
func (t *validText) str() (string, error) {
	start := t.i
	t.skipStr()
	raw := t.b[start+1 : t.i-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), nil
	}
	if esc, ok := loneSurrogate(raw); ok {
		return "", fmt.Errorf("a string holds the escape %s, a lone UTF-16 surrogate that names no character", esc)
	}
	var s string
	err := json.Unmarshal(t.b[start:t.i], &s)
	return s, err
}

// loneSurrogate returns the first \uXXXX escape in raw (the text of a valid
// JSON string, without its quotes) of a UTF-16 surrogate that is not half
// of a high-low pair.
func loneSurrogate(raw []byte) (string, bool) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		r, ok := hex4(raw, i)
		if !ok {
			continue // not a \u escape: i is at its one letter
		}
		i += 4
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return string(raw[i-5 : i+1]), true
		case r >= 0xd800 && r <= 0xdbff:
			if lo, ok := hex4(raw, i+2); ok && raw[i+1] == '\\' && lo >= 0xdc00 && lo <= 0xdfff {
				i += 6
				continue
			}
			return string(raw[i-5 : i+1]), true
		}
	}
	return "", false
}

// hex4 reads the four hex digits after the 'u' at raw[i], when raw[i] is
// one.
func hex4(raw []byte, i int) (rune, bool) {
	if i+5 > len(raw) || raw[i] != 'u' {
		return 0, false
	}
	r, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16)
	return rune(r), err == nil
}

// skip moves t.i past the value at t.i.
func (t *validText) skip() {
	switch t.b[t.i] {
	case '"':
		t.skipStr()
	case '{', '[':
		for depth := 0; ; {
			switch t.b[t.i] {
			case '"':
				t.skipStr()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			t.i++
			if depth == 0 {
				return
			}
		}
	default: // a number or a literal, up to what follows it
		for t.i < len(t.b) && bytes.IndexByte([]byte(",}] \t\n\r"), t.b[t.i]) < 0 {
			t.i++
		}
	}
}

// skipStr moves t.i past the string at t.i.
func (t *validText) skipStr() {
	for t.i++; t.b[t.i] != '"'; t.i++ {
		if t.b[t.i] == '\\' {
			t.i++
		}
	}
	t.i++
}

// EachMember calls fn, in order, with the key and the value's text of
// each member of the JSON object data, which json.Valid must accept. A
// key that repeats is fn's to refuse. It returns an error when data is
// not an object, or fn's error.
func EachMember(data []byte, fn func(key string, raw []byte) error) error {
	t := &validText{b: data}
	t.space()
	if t.b[t.i] != '{' {
		return fmt.Errorf("not a JSON object")
	}
	return t.members(func(k string, at int) error {
		t.skip()
		return fn(k, data[at:t.i])
	})
}
