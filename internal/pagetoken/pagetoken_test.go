package pagetoken

import (
	"errors"
	"testing"

	"nameservice.dev/nameservice/driver"
)

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a:main", "tenant/x:release/v1.0", "ü:\x7f"} {
		got, err := Decode(Encode(s))
		if err != nil || got != s {
			t.Errorf("Decode(Encode(%q)) = %q, %v", s, got, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	if _, err := Decode("not base64!"); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Fatalf("Decode of a malformed token: %v, want ErrInvalidArgument", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode("a:main"))
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, tok string) {
		s, err := Decode(tok)
		if err != nil {
			if !errors.Is(err, driver.ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		if Encode(s) != tok {
			t.Fatalf("Encode(Decode(%q)) = %q", tok, Encode(s))
		}
	})
}
