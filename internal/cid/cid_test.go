package cid

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// encode builds a CID's text from its varint fields and digest, with
// pad extra bytes of 0x80 prepended to the version varint's last byte (a
// non-minimal varint when pad > 0).
func encode(version, codec, mh uint64, digest []byte, pad int) string {
	var b []byte
	v := binary.AppendUvarint(nil, version)
	if pad > 0 {
		v[len(v)-1] |= 0x80
		for range pad - 1 {
			v = append(v, 0x80)
		}
		v = append(v, 0)
	}
	b = append(b, v...)
	b = binary.AppendUvarint(b, codec)
	b = binary.AppendUvarint(b, mh)
	b = binary.AppendUvarint(b, uint64(len(digest)))
	return "b" + b32.EncodeToString(append(b, digest...))
}

func TestParse(t *testing.T) {
	sha := make([]byte, 32)
	for _, c := range []struct {
		name, s string
		notCID  bool
		refused string
	}{
		{name: "canonical sha-256", s: encode(1, 0x71, 0x12, sha, 0)},
		{name: "64-byte digest", s: encode(1, 0x71, 0x13, make([]byte, 64), 0)},
		{name: "65-byte digest", s: encode(1, 0x71, 0x13, make([]byte, 65), 0), refused: "65 bytes"},
		{name: "non-minimal version", s: encode(1, 0x71, 0x12, sha, 1), refused: "shortest form"},
		{name: "version 0", s: encode(0, 0x71, 0x12, sha, 0), notCID: true},
		{name: "a file address", s: "fluree:file://db/commit/1.json", notCID: true},
		{name: "upper case", s: strings.ToUpper(encode(1, 0x71, 0x12, sha, 0)), notCID: true},
		{name: "truncated digest", s: encode(1, 0x71, 0x12, sha, 0)[:20], notCID: true},
	} {
		err := Parse(c.s)
		switch {
		case c.notCID && !errors.Is(err, ErrNotCID):
			t.Errorf("%s: %v, want ErrNotCID", c.name, err)
		case c.refused != "" && (err == nil || errors.Is(err, ErrNotCID) || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.refused)
		case !c.notCID && c.refused == "" && err != nil:
			t.Errorf("%s: %v, want nil", c.name, err)
		}
	}
}

// FuzzParse: Parse never panics, and whatever it accepts re-encodes to
// itself from its minimal fields.
func FuzzParse(f *testing.F) {
	f.Add(encode(1, 0x71, 0x12, make([]byte, 32), 0))
	f.Add(encode(1, 0x71, 0x12, make([]byte, 32), 2))
	f.Add("b")
	f.Add("bafy")
	f.Fuzz(func(t *testing.T, s string) {
		if Parse(s) != nil {
			return
		}
		b, err := b32.DecodeString(s[1:])
		if err != nil {
			t.Fatalf("accepted %q, whose base32 does not decode: %v", s, err)
		}
		var f [4]uint64
		rest := b
		for i := range f {
			v, n := binary.Uvarint(rest)
			f[i], rest = v, rest[n:]
		}
		if got := encode(f[0], f[1], f[2], rest, 0); got != s {
			t.Fatalf("accepted %q, which re-encodes as %q", s, got)
		}
	})
}
