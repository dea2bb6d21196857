// Package cid reads the content IDs Fluree names commits, indexes and
// contexts by: a CIDv1 in multibase base32 lower case ("b", then RFC 4648
// base32 without padding) holding varint version, codec, multihash code,
// digest length, then the digest.
package cid

import (
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDigestBytes is the longest multihash digest Fluree reads (its
// ContentId holds a 64-byte multihash).
const MaxDigestBytes = 64

// maxLen bounds the text Parse looks at.
const maxLen = 512

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ErrNotCID is the error of Parse for text that is not a CIDv1 in base32
// lower case at all, as opposed to one Fluree would refuse to read.
var ErrNotCID = errors.New("not a CIDv1 in base32 lower case (b...)")

// Parse reads s as a content ID. It returns an error wrapping ErrNotCID
// when s is not one in Fluree's form (another multibase, bad base32, a
// version other than 1, a multihash whose length byte does not match its
// digest), and a plain error naming the problem when s is one, but one
// Fluree cannot read: a varint not in its shortest form (Fluree's varint
// decoder refuses it) or a digest over MaxDigestBytes.
func Parse(s string) error {
	if len(s) < 2 || s[0] != 'b' || len(s) > maxLen {
		return ErrNotCID
	}
	b, err := b32.DecodeString(s[1:])
	if err != nil || b32.EncodeToString(b) != s[1:] {
		return fmt.Errorf("%w: bad base32", ErrNotCID)
	}
	var fields [4]uint64
	minimal := true
	for i := range fields {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("%w: truncated", ErrNotCID)
		}
		minimal = minimal && n == binary.PutUvarint(make([]byte, binary.MaxVarintLen64), v)
		fields[i], b = v, b[n:]
	}
	switch version, size := fields[0], fields[3]; {
	case version != 1:
		return fmt.Errorf("%w: version %d", ErrNotCID, version)
	case uint64(len(b)) != size:
		return fmt.Errorf("%w: its multihash length does not match its digest", ErrNotCID)
	case !minimal:
		return errors.New("a varint of the content ID is not in its shortest form, which Fluree refuses")
	case size > MaxDigestBytes:
		return fmt.Errorf("the content ID's digest is %d bytes, over Fluree's limit of %d", size, MaxDigestBytes)
	}
	return nil
}
