package driver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseObject feeds arbitrary bytes to the payload parser. It must never
// panic; what it accepts is valid UTF-8 with no repeated key (the key-by-key
// decoder accepts it too), is what
// encoding/json reads too, survives encoding and parsing again unchanged, and
// stays within MaxDecodeDepth.
//
//	go test -fuzz FuzzParseObject ./driver/
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"a":[1,2.50,{"b":null}],"c":"\u00e9"}`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}",
		`{"t":123456789012345678901234567890}`, `[1]`, `{"a":{"b":{"c":[[[]]]}}}`, `{} {}`, `{"\ud800":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		o, err := ParseObject(raw)
		if err != nil {
			if !strings.Contains(err.Error(), "invalid argument") {
				t.Fatalf("ParseObject error does not wrap ErrInvalidArgument: %v", err)
			}
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
		if o == nil {
			if std != nil {
				t.Fatalf("nil object for %q", raw)
			}
			return
		}
		if !JSONEqual(map[string]any(o), std) {
			t.Fatalf("reads %q differently from encoding/json", raw)
		}
		b, err := o.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted payload does not encode: %v", err)
		}
		back, err := ParseObject(b)
		if err != nil || !back.Equal(o) {
			t.Fatalf("payload does not survive encoding: %s: %v", b, err)
		}
	})
}
