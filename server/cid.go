package server

import (
	"encoding/base32"
	"encoding/binary"
	"errors"
)

// Fluree identifies commits, indexes and contexts by content ID: a CIDv1
// written in multibase base32 lower case ("b" then RFC 4648 base32 without
// padding), the form Fluree's servers and clients print. checkCID accepts
// exactly that form: version 1, a codec, and a multihash whose length byte
// matches its digest. Other multibase encodings, which Fluree would
// re-encode, are refused.
var cidBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func checkCID(s string) error {
	if len(s) < 2 || s[0] != 'b' {
		return errors.New("not a CIDv1 in base32 lower case (b...)")
	}
	if len(s) > 512 {
		return errors.New("CID longer than 512 characters")
	}
	b, err := cidBase32.DecodeString(s[1:])
	if err != nil || cidBase32.EncodeToString(b) != s[1:] {
		return errors.New("not a CIDv1 in base32 lower case: bad base32")
	}
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	version, ok1 := next()
	_, ok2 := next() // codec
	_, ok3 := next() // multihash function
	size, ok4 := next()
	switch {
	case !ok1 || !ok2 || !ok3 || !ok4:
		return errors.New("CID truncated")
	case version != 1:
		return errors.New("not a version 1 CID")
	case uint64(len(b)) != size:
		return errors.New("CID multihash length does not match its digest")
	}
	return nil
}
