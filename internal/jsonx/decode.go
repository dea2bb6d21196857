package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"nameservice.dev/nameservice/internal/text"
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
		if _, depth := shape(raw); depth > MaxDepth {
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

// shape returns the number of object keys in valid JSON text, and its
// deepest nesting of objects and arrays.
func shape(raw []byte) (keys, depth int) {
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
			j := i + 1
			for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
				j++
			}
			if j < len(raw) && raw[j] == ':' {
				keys++
			}
		}
	}
	return keys, depth
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

// decodeValue reads one value at depth (1 for the outermost).
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // nil, bool, string or json.Number
	}
	if depth > MaxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", MaxDepth)
	}
	switch d {
	case '[':
		l := []any{}
		for dec.More() {
			e, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, e)
		}
		_, err := dec.Token()
		return l, syntaxError(err)
	case '{':
		m := map[string]any{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, syntaxError(err)
			}
			k, _ := tok.(string)
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("an object has the key %q twice", text.Clip(k, 64))
			}
			if m[k], err = decodeValue(dec, depth+1); err != nil {
				return nil, err
			}
		}
		_, err := dec.Token()
		return m, syntaxError(err)
	}
	return nil, fmt.Errorf("unexpected %q", d)
}

func syntaxError(err error) error {
	if err == nil {
		return nil
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
