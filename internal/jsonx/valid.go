package jsonx

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"nameservice.dev/nameservice/internal/text"
)

var errTooDeep = fmt.Errorf("nested deeper than %d levels", MaxDepth)

// decoder is a jsontext.Decoder with its reader, kept in decoders: a new
// one costs more than the decoding of a small value, which record files
// are made of.
type decoder struct {
	jsontext.Decoder
	in bytes.Reader
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// newDecoder returns a decoder of data from the pool; release puts it back.
func newDecoder(data []byte, opts ...jsontext.Options) *decoder {
	d := decoders.Get().(*decoder)
	d.in.Reset(data)
	d.Reset(&d.in, opts...)
	return d
}

func (d *decoder) release() {
	d.in.Reset(nil)
	decoders.Put(d)
}

// value decodes the value dec reads next as encoding/json does with
// UseNumber, refusing an object key that repeats (dec allows it, so that
// this error, and its text, come first) and nesting deeper than MaxDepth.
func value(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch kind := tok.Kind(); kind {
	case '{', '[':
		if dec.StackDepth() > MaxDepth {
			return nil, errTooDeep
		}
		if kind == '[' {
			l := []any{}
			for dec.PeekKind() != ']' {
				v, err := value(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.ReadToken()
			return l, err
		}
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String()
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("an object has the key %q twice", text.Clip(key, 64))
			}
			if m[key], err = value(dec); err != nil {
				return nil, err
			}
		}
		_, err := dec.ReadToken()
		return m, err
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case 'n':
		return nil, nil
	}
	return tok.Bool(), nil
}

// explain returns the error Decode reports for text that value refused
// with err, in the order Decode checks: UTF-8, the grammar (with
// encoding/json's words), the depth, then the first key that repeats or
// lone surrogate (jsontext refuses one, encoding/json makes it U+FFFD).
func explain(raw []byte, err error) error {
	for i, r := range string(raw) {
		if r == utf8.RuneError && !bytes.HasPrefix(raw[i:], []byte("\uFFFD")) { // a byte no rune starts with
			return fmt.Errorf("not valid UTF-8 at byte %d", i)
		}
	}
	if !json.Valid(raw) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		return errors.New("data after the JSON value")
	}
	if depthOf(raw) > MaxDepth {
		return errTooDeep
	}
	if _, ok := err.(*jsontext.SyntacticError); ok {
		if e := loneSurrogate(raw); e != nil {
			return e
		}
	}
	// A key that repeats; or, should jsontext ever refuse text for a
	// reason not above, its own error rather than none.
	return cmp.Or(err, errors.New("not valid JSON"))
}

// loneSurrogate returns an error naming the first \uXXXX escape in raw
// (valid JSON text, or a string's text without its quotes) of a UTF-16
// surrogate that is not half of a high-low pair, nil when there is none.
func loneSurrogate(raw []byte) error {
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
		case r >= 0xd800 && r <= 0xdbff:
			if lo, ok := hex4(raw, i+2); ok && raw[i+1] == '\\' && lo >= 0xdc00 && lo <= 0xdfff {
				i += 6
				continue
			}
		default:
			continue
		}
		return fmt.Errorf("a string holds the escape %s, a lone UTF-16 surrogate that names no character", raw[i-5:i+1])
	}
	return nil
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

// EachMember calls fn, in order, with the key and the value's text of
// each member of the JSON object data, which json.Valid must accept. A
// key that repeats is fn's to refuse; one with a lone surrogate escape is
// refused, and bytes that are not UTF-8 in one become U+FFFD, as
// encoding/json makes them. It returns an error when data is not an
// object, or fn's error.
func EachMember(data []byte, fn func(key string, raw []byte) error) error {
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	dec := newDecoder(data, opts...)
	defer dec.release()
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return fmt.Errorf("not a JSON object")
	}
	for dec.PeekKind() == '"' {
		k, err := dec.ReadValue()
		if err != nil {
			return err
		}
		key, err := unquote(k)
		if err != nil {
			return err
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		end := int(dec.InputOffset())
		if err := fn(key, data[end-len(v):end]); err != nil {
			return err
		}
	}
	return nil
}

// unquote decodes a valid JSON string as encoding/json does, refusing a
// lone surrogate escape.
func unquote(raw []byte) (string, error) {
	if s := raw[1 : len(raw)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), nil
	}
	if err := loneSurrogate(raw); err != nil {
		return "", err
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}
