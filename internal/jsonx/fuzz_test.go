package jsonx

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzDecode feeds arbitrary bytes to Decode. It must never panic; what it
// accepts is valid UTF-8 with no repeated key (the key-by-key decoder
// accepts it too), is what encoding/json reads too, and survives encoding
// and decoding again unchanged.
//
//	go test -fuzz FuzzDecode ./internal/jsonx/
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"a":[1,2.50,{"b":null}],"c":"\u00e9"}`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}",
		`{"t":123456789012345678901234567890}`, `[1]`, `{"a":{"b":{"c":[[[]]]}}}`, `{} {}`, `{"\ud800":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := Decode(raw)
		if err != nil {
			return
		}
		if !utf8.Valid(raw) {
			t.Fatalf("accepted invalid UTF-8: %q", raw)
		}
		strict := json.NewDecoder(bytes.NewReader(raw))
		strict.UseNumber()
		if _, err := decodeValue(strict, 1); err != nil {
			t.Fatalf("accepted what the key-by-key decoder refuses (%v): %q", err, raw)
		}
		var std any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("accepted what encoding/json refuses (%v): %q", err, raw)
		}
		if !Equal(v, std) {
			t.Fatalf("reads %q differently from encoding/json", raw)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("accepted value does not encode: %v", err)
		}
		back, err := Decode(b)
		if err != nil || !Equal(back, v) {
			t.Fatalf("value does not survive encoding: %s: %v", b, err)
		}
	})
}
