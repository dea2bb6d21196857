package driver

import (
	"encoding/json"
	"errors"
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
