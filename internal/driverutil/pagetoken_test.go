package driverutil

import (
	"errors"
	"testing"

	"nameservice.dev/nameservice/model"
)

func TestPageTokenRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a:main", "tenant/x:release/v1.0", "ü:\x7f"} {
		got, err := DecodePageToken(EncodePageToken(s))
		if err != nil || got != s {
			t.Errorf("DecodePageToken(EncodePageToken(%q)) = %q, %v", s, got, err)
		}
	}
}

func TestPageTokenMalformed(t *testing.T) {
	if _, err := DecodePageToken("not base64!"); !errors.Is(err, model.ErrInvalidArgument) {
		t.Fatalf("Decode of a malformed token: %v, want ErrInvalidArgument", err)
	}
}

func FuzzDecodePageToken(f *testing.F) {
	f.Add(EncodePageToken("a:main"))
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, tok string) {
		s, err := DecodePageToken(tok)
		if err != nil {
			if !errors.Is(err, model.ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		if EncodePageToken(s) != tok {
			t.Fatalf("EncodePageToken(DecodePageToken(%q)) = %q", tok, EncodePageToken(s))
		}
	})
}
