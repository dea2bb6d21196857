package driver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestJSONEqualComparesNumbersByValue(t *testing.T) {
	eq := [][2]any{
		{json.Number("2"), json.Number("2.0")},
		{json.Number("1.2"), 1.2},
		{json.Number("1e3"), 1000},
		{int64(7), json.Number("7")},
		{map[string]any{"a": []any{json.Number("1"), "x"}}, Object{"a": []any{1.0, "x"}}},
	}
	for _, p := range eq {
		if !JSONEqual(p[0], p[1]) || !JSONEqual(p[1], p[0]) {
			t.Errorf("JSONEqual(%#v, %#v) = false, want true", p[0], p[1])
		}
	}
	ne := [][2]any{
		{json.Number("2"), json.Number("2.5")},
		{json.Number("9007199254740993"), json.Number("9007199254740992")},
		{"2", json.Number("2")},
		{nil, map[string]any{}},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": nil}},
		{[]any{1, 2}, []any{2, 1}},
		{true, "true"},
	}
	for _, p := range ne {
		if JSONEqual(p[0], p[1]) {
			t.Errorf("JSONEqual(%#v, %#v) = true, want false", p[0], p[1])
		}
	}
}

func TestObjectMarshalIsStable(t *testing.T) {
	o := Object{"z": 1, "t": json.Number("3"), "a": "x", "address": "addr", "nested": map[string]any{"b": 1, "a": 2}}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"address":"addr","t":3,"a":"x","nested":{"a":2,"b":1},"z":1}`
	if string(b) != want {
		t.Fatalf("marshal = %s, want %s", b, want)
	}
}

func TestParseObjectRejectsNonObjects(t *testing.T) {
	for _, in := range []string{`[1]`, `"s"`, `3`, `{"a":1} x`, `{`} {
		if _, err := ParseObject([]byte(in)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseObject(%s) error = %v, want ErrInvalidArgument", in, err)
		}
	}
	if o, err := ParseObject([]byte("null")); o != nil || err != nil {
		t.Errorf("ParseObject(null) = %v, %v", o, err)
	}
}

func TestCloneIsDeep(t *testing.T) {
	o := Object{"m": map[string]any{"k": []any{"v"}}}
	c := o.Clone()
	c["m"].(map[string]any)["k"].([]any)[0] = "changed"
	if o["m"].(map[string]any)["k"].([]any)[0] != "v" {
		t.Fatal("Clone shares nested values")
	}
}

func TestCondition(t *testing.T) {
	a, b := RefValue("a", 5), RefValue("b", 5)
	cases := []struct {
		c         Condition
		cur, next Value
		want      bool
	}{
		{IfAbove(), a, RefValue("x", 6), true},
		{IfAbove(), a, b, false},
		{IfAtLeast(), a, b, true},
		{IfAtLeast(), a, RefValue("x", 4), false},
		{IfEquals(a), a, RefValue("x", 6), true},
		{IfEquals(b), a, RefValue("x", 6), false},
		{IfEquals(Value{V: 5}), a, RefValue("x", 6), false},
	}
	for i, c := range cases {
		if got := c.c.Holds(c.cur, c.next); got != c.want {
			t.Errorf("case %d: Holds = %v, want %v", i, got, c.want)
		}
	}
}

// TestParseObjectRefusesWhatJSONWouldRewrite: encoding/json keeps the last
// of two equal keys and turns bad UTF-8 into U+FFFD; a payload must be
// refused instead (issue 14, item 6).
func TestParseObjectRefusesWhatJSONWouldRewrite(t *testing.T) {
	for in, why := range map[string]string{
		`{"a":1,"a":2}`:               `key "a" twice`,
		`{"x":{"b":[{"c":1,"c":1}]}}`: `key "c" twice`,
		"{\"a\":\"\xff\"}":            "UTF-8",
		"{\"\xfe\":1}":                "UTF-8",
		strings.Repeat("[", MaxDecodeDepth+1) + strings.Repeat("]", MaxDecodeDepth+1): "deeper than 512",
	} {
		_, err := ParseObject([]byte(in))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseObject(%.40q) = %v, want ErrInvalidArgument saying %q", in, err, why)
		}
	}
	if _, err := NormalizeObject(map[string]any{"a": []any{"ok", "b\xffad"}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NormalizeObject with bad UTF-8 = %v, want ErrInvalidArgument", err)
	}
}

func TestCheckPayloadNamesTheLimit(t *testing.T) {
	deep := map[string]any{}
	for range MaxPayloadDepth {
		deep = map[string]any{"a": deep}
	}
	if err := CheckPayload("config", Object(deep)); err == nil || !strings.Contains(err.Error(), "config nests more than 20") {
		t.Errorf("CheckPayload(%d deep) = %v", MaxPayloadDepth+1, err)
	}
	big := Object{"s": strings.Repeat("x", MaxPayloadBytes)}
	if err := CheckPayload("status", big); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "status is 65544 bytes of JSON, over the limit of 65536") {
		t.Errorf("CheckPayload(big) = %v", err)
	}
}
