package jsonx

import (
	"io"

	"github.com/go-json-experiment/json/jsontext"
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
	dec := newDecoder(raw, jsontext.AllowDuplicateNames(true))
	defer dec.release()
	v, err := value(&dec.Decoder)
	if err == nil {
		if _, err = dec.ReadToken(); err == io.EOF {
			return v, nil
		}
	}
	return nil, explain(raw, err)
}

// depthOf returns the deepest nesting of objects and arrays in valid JSON
// text.
func depthOf(raw []byte) (depth int) {
	dec := newDecoder(raw, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	defer dec.release()
	for _, err := dec.ReadToken(); err == nil; _, err = dec.ReadToken() {
		depth = max(depth, dec.StackDepth())
	}
	return depth
}
