package jsonx

import (
	"encoding/json"
	"fmt"
	"io"

	"nameservice.dev/nameservice/internal/text"
)

// decodeValue reads one value at depth (1 for the outermost) with
// encoding/json's tokens: the reference the tests hold Decode's fast path
// to.
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
