package driver

import "testing"

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
