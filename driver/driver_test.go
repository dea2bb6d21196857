package driver

import (
	"testing"

	"nameservice.dev/nameservice/model"
)

func TestCondition(t *testing.T) {
	a, b := model.RefValue("a", 5), model.RefValue("b", 5)
	cases := []struct {
		c         Condition
		cur, next model.Value
		want      bool
	}{
		{IfAbove(), a, model.RefValue("x", 6), true},
		{IfAbove(), a, b, false},
		{IfAtLeast(), a, b, true},
		{IfAtLeast(), a, model.RefValue("x", 4), false},
		{IfEquals(a), a, model.RefValue("x", 6), true},
		{IfEquals(b), a, model.RefValue("x", 6), false},
		{IfEquals(model.Value{V: 5}), a, model.RefValue("x", 6), false},
	}
	for i, c := range cases {
		if got := c.c.Holds(c.cur, c.next); got != c.want {
			t.Errorf("case %d: Holds = %v, want %v", i, got, c.want)
		}
	}
}
