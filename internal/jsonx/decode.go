package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of any JSON value Decode reads, well
// above MaxPayloadDepth (the write limit) and far below encoding/json's own
// limit, so that every value read can also be encoded again inside a record.
const MaxDepth = 512

// Decode decodes exactly one JSON value into JSON-normal Go values
// (numbers as json.Number). Unlike encoding/json it refuses, with an error
// naming the problem, what would otherwise be silently rewritten: invalid
// UTF-8 (encoding/json replaces it with U+FFFD) and an object key that
// appears twice (encoding/json keeps the last). It also refuses nesting deeper
// than MaxDepth and data after the value.
func Decode(raw []byte) (any, error) {
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("not valid UTF-8 at byte %d", invalidUTF8At(raw))
	}
	if json.Valid(raw) {
		// The fast path for valid text: its depth, then one pass that
		// builds the value (see validText).
		if depthOf(raw) > MaxDepth {
			return nil, fmt.Errorf("nested deeper than %d levels", MaxDepth)
		}
		return (&validText{b: raw}).value()
	}
	// Invalid text: encoding/json names the problem, which is data after
	// the value when it decodes one.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return nil, errors.New("data after the JSON value")
}

// depthOf returns the deepest nesting of objects and arrays in valid JSON
// text.
func depthOf(raw []byte) (depth int) {
	d := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			d++
			depth = max(depth, d)
		case '}', ']':
			d--
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		}
	}
	return depth
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}
