package jsonx

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeJSONValidText checks the fast path of Decode (valid text)
// against the key-by-key decoder, values and errors alike, and
// EachMember against the values it splits.
func TestDecodeJSONValidText(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { } `, `[]`, ` [ [ ] , { } ] `, `"x"`, `"a\"b\\c\u00e9\ud83d\ude00"`, `-0.5E-3`, `12`, `true`, `false`, `null`,
		`{"a":1,"a":2}`, `{"a\u0062":1,"ab":2}`, `{"x":{"a":1,"a":2}}`, `[{"k":[1,{"k":2,"k":3}]}]`,
		`{"k":"q\"uo}te]","n":-1.5e+10,"t":true,"f":false,"z":null,"l":[1, "2" ,[3]]}`,
		"{\"a\" :\t[ {\"b\" : [ ] } , \"}\" , 0 ] ,\n\"c\":{}}",
	} {
		got, err := Decode([]byte(s))
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber()
		want, werr := decodeValue(dec, 1)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Errorf("%s: error %v, want %v", s, err, werr)
			continue
		}
		if err == nil && !Equal(got, want) {
			t.Errorf("%s: got %#v, want %#v", s, got, want)
		}
		if m, ok := want.(map[string]any); ok && err == nil {
			n := 0
			if err := EachMember([]byte(s), func(k string, raw []byte) error {
				v, err := Decode(raw)
				if err != nil || !Equal(v, m[k]) {
					t.Errorf("%s: member %q is %s (%v)", s, k, raw, err)
				}
				n++
				return nil
			}); err != nil || n != len(m) {
				t.Errorf("%s: EachMember saw %d members of %d (%v)", s, n, len(m), err)
			}
		}
	}
	if err := EachMember([]byte(`[1]`), func(string, []byte) error { return nil }); err == nil {
		t.Error("EachMember accepted an array")
	}
}

// Bytes that are not UTF-8 in a key EachMember reads become U+FFFD, as
// encoding/json makes them; a value's text is passed on as it is.
func TestEachMemberReplacesBadUTF8(t *testing.T) {
	in := []byte("{\"x\xffy\":\"a\xffb\",\"\xc3\":[\"\xc3\"]}")
	var want map[string]json.RawMessage
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	got := map[string]json.RawMessage{}
	err := EachMember(in, func(k string, raw []byte) error { got[k] = raw; return nil })
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// A \u escape of a lone surrogate names no character: encoding/json would
// read it as U+FFFD, so Decode refuses it, naming the escape; a pair,
// and other escapes beside it, read as encoding/json reads them.
func TestDecodeJSONRefusesLoneSurrogates(t *testing.T) {
	for _, bad := range []string{`"\udcff"`, `{"a":"x\ud800"}`, `["\ud800\u0041"]`, `{"\udfff":1}`, `"\ud83d\ud83d"`} {
		if _, err := Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "lone UTF-16 surrogate") {
			t.Errorf("Decode(%s) = %v, want a lone surrogate refused", bad, err)
		}
	}
	for _, good := range []string{`"\ud83d\ude00"`, `"\\udcff"`, `"a\n\"\u00e9\ud83d\ude00b"`, `"\\\ud83d\ude00"`} {
		var want any
		if err := json.Unmarshal([]byte(good), &want); err != nil {
			t.Fatal(err)
		}
		got, err := Decode([]byte(good))
		if err != nil || got != want {
			t.Errorf("Decode(%s) = %q, %v; want %q", good, got, err, want)
		}
	}
}
