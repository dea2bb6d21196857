package jsonld

import (
	"errors"
	"testing"

	"nameservice.dev/nameservice/model"
)

func TestParseLayout(t *testing.T) {
	for s, want := range map[string]Layout{"": LayoutB, "b": LayoutB, "B": LayoutB, "c": LayoutC} {
		if got, err := ParseLayout(s); err != nil || got != want {
			t.Errorf("ParseLayout(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseLayout("a"); !errors.Is(err, model.ErrInvalidArgument) {
		t.Errorf("ParseLayout(a): %v", err)
	}
}
