package model

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"nameservice.dev/nameservice/internal/text"
)

// DefaultBranch is the branch of an ID given without one.
const DefaultBranch = "main"

// MaxIDLength is the longest normalised ID, in bytes.
const MaxIDLength = 512

// ReservedSuffixes are the segment endings the file layouts use for their own
// files; a name or branch segment may not end in one, so that no ID's files can
// be mistaken for another's.
var ReservedSuffixes = []string{".index", ".head", ".status", ".config", ".lock", ".tmp"}

// ID names a record: a name and a branch. Its normalised form is
// "name:branch". Names and branches may contain '/'.
type ID struct {
	Name   string
	Branch string
}

// String returns the normalised form "name:branch".
func (id ID) String() string { return id.Name + ":" + id.Branch }

// IsZero reports whether id is the zero ID.
func (id ID) IsZero() bool { return id.Name == "" && id.Branch == "" }

// maxEchoedID is how much of an invalid ID an error message repeats.
const maxEchoedID = 80

// ParseID parses "name" or "name:branch" (the branch defaults to main).
// It returns an error wrapping ErrInvalidID, naming the rule broken, when the
// name or branch is empty or only white space, the string holds a second
// ':', a NUL or other control character, a zero-width or bidirectional
// formatting character (any Unicode format character, category Cf), invalid
// UTF-8 or text not in Unicode normalisation form NFC, a part starts with '/'
// or has an empty, "." or ".." segment, a segment ends in one of
// ReservedSuffixes, or the normalised ID is longer than MaxIDLength bytes.
// The error repeats at most the first 80 bytes of s.
func ParseID(s string) (ID, error) {
	name, branch, hasBranch := strings.Cut(s, ":")
	if !hasBranch {
		branch = DefaultBranch
	}
	id := ID{Name: name, Branch: branch}
	if p := idProblem(s, id); p != "" {
		return ID{}, fmt.Errorf("%w %q: %s", ErrInvalidID, text.Clip(s, maxEchoedID), p)
	}
	return id, nil
}

// Validate returns an error wrapping ErrInvalidID when id breaks a rule of
// ParseID.
func (id ID) Validate() error {
	if p := idProblem(id.String(), id); p != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidID, text.Clip(id.String(), maxEchoedID), p)
	}
	return nil
}

// idProblem returns what is wrong with id, or "" when nothing is.
func idProblem(raw string, id ID) string {
	if !utf8.ValidString(raw) {
		return "not valid UTF-8"
	}
	if len(id.String()) > MaxIDLength {
		return fmt.Sprintf("longer than %d bytes (%d)", MaxIDLength, len(id.String()))
	}
	if !norm.NFC.IsNormalString(raw) {
		return fmt.Sprintf("not in Unicode normalisation form NFC (write it as %q)", text.Clip(norm.NFC.String(raw), maxEchoedID))
	}
	if strings.Contains(id.Branch, ":") {
		return "more than one ':'"
	}
	for _, part := range []struct{ what, s string }{{"name", id.Name}, {"branch", id.Branch}} {
		if p := partProblem(part.s); p != "" {
			return part.what + " " + p
		}
	}
	return ""
}

func partProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	if strings.TrimFunc(s, unicode.IsSpace) == "" {
		return "is only white space"
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Sprintf("contains control character %U", r)
		}
		if unicode.Is(unicode.Cf, r) {
			return fmt.Sprintf("contains invisible format character %U (zero-width or direction control)", r)
		}
	}
	if strings.HasPrefix(s, "/") {
		return "starts with '/'"
	}
	for _, seg := range strings.Split(s, "/") {
		switch seg {
		case "":
			return "has an empty path segment"
		case ".", "..":
			return fmt.Sprintf("has a %q path segment", seg)
		}
		for _, suf := range ReservedSuffixes {
			if strings.HasSuffix(seg, suf) {
				return fmt.Sprintf("has a segment ending in the reserved suffix %q", suf)
			}
		}
	}
	return ""
}
