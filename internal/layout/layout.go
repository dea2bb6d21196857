// Package layout is the ns@v2 key scheme shared by the file and object-store
// drivers: which files (keys) hold a record, which parts of the record each
// holds, and the way back from a key to the IDs it can belong to.
//
// Keys are slash-separated and relative to the store's root, e.g.
// "ns@v2/mydb/main.json". Names and branches may contain '/', so a key
// could belong to several IDs ("ns@v2/a/b/main.json" is a/b:main or
// a:b/main): the @id inside the file decides (see docs/format.md).
package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"

	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Root is the first segment of every key.
const Root = "ns@v2"

// File is one file of a record.
type File struct {
	Key string
	// Parts are the parts of the record this file holds.
	Parts jsonld.Part
	// Defining is set on the one file whose existence is the record's.
	Defining bool
}

// suffixes are the files of each layout, keyed by suffix, defining file
// first; layout C's status file holds the identity too, so a retract is
// one write.
var suffixes = map[jsonld.Layout][]File{
	jsonld.LayoutB: {
		{".json", jsonld.Identity | jsonld.HeadPart | jsonld.StatusPart | jsonld.ConfigPart, true},
		{".index.json", jsonld.IndexPart, false},
	},
	jsonld.LayoutC: {
		{".status.json", jsonld.Identity | jsonld.StatusPart, true},
		{".head.json", jsonld.HeadPart, false},
		{".index.json", jsonld.IndexPart, false},
		{".config.json", jsonld.ConfigPart, false},
	},
}

// MaxSegment is the longest name or branch segment stored as it is, in
// bytes: a file name adds at most 33 bytes of suffixes and file systems
// allow 255. A longer one is stored shortened: its first bytes (at most
// hashedKeep, cut at a character boundary), "~", and 32 hex digits of its
// SHA-256; the file's @id holds the whole ID.
const MaxSegment = 200

const hashedKeep = 150

// KeptPrefix is how many of a segment's first bytes every key holds as
// they are (a shortened segment keeps hashedKeep, cut back at most to a
// character boundary); a listing may match more only against IDs.
const KeptPrefix = hashedKeep - (utf8.UTFMax - 1)

// segment returns the path form of one ID segment.
func segment(s string) string {
	if len(s) <= MaxSegment {
		return s
	}
	cut := hashedKeep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	sum := sha256.Sum256([]byte(s))
	return s[:cut] + "~" + hex.EncodeToString(sum[:16])
}

// Stem returns the stem of id's files (see Classify): its name and branch
// joined by '/', each segment in its path form.
func Stem(id model.ID) string {
	segs := strings.Split(id.Name+"/"+id.Branch, "/")
	for i, s := range segs {
		segs[i] = segment(s)
	}
	return strings.Join(segs, "/")
}

// Shortened reports whether a segment of stem st may be a shortened one,
// whose ID only the file's @id tells.
func Shortened(st string) bool {
	for _, seg := range strings.Split(st, "/") {
		i := len(seg) - 33
		if i >= 0 && seg[i] == '~' && strings.Trim(seg[i+1:], "0123456789abcdef") == "" {
			return true
		}
	}
	return false
}

// Files returns the files of id in layout l, the defining file first, or
// an error wrapping model.ErrInvalidID.
func Files(l jsonld.Layout, id model.ID) ([]File, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	return StemFiles(l, Stem(id)), nil
}

// StemFiles returns the files of stem st in layout l, the defining file
// first, whichever ID they belong to.
func StemFiles(l jsonld.Layout, st string) []File {
	var out []File
	for _, s := range suffixes[l] {
		s.Key = Root + "/" + st + s.Key
		out = append(out, s)
	}
	return out
}

// Role is what a key is to a layout.
type Role int

const (
	// NotRecord: not an ns@v2 record file (temp or lock debris, others).
	NotRecord Role = iota
	// Defining: the defining file of a record.
	Defining
	// Secondary: another file of a record.
	Secondary
	// OtherLayout: a record file of the other layout (an error to find).
	OtherLayout
)

// Classify says what key is to layout l, and returns its stem (the key less
// Root and the file suffix, e.g. "mydb/main").
func Classify(l jsonld.Layout, key string) (Role, string) {
	rest, ok := strings.CutPrefix(key, Root+"/")
	if !ok || !strings.HasSuffix(rest, ".json") {
		return NotRecord, ""
	}
	if role, st := match(l, rest); role != NotRecord {
		return role, st
	}
	if role, st := match(Other(l), rest); role != NotRecord {
		return OtherLayout, st
	}
	return NotRecord, ""
}

// Other returns the layout that is not l.
func Other(l jsonld.Layout) jsonld.Layout {
	if l == jsonld.LayoutB {
		return jsonld.LayoutC
	}
	return jsonld.LayoutB
}

// plain reports whether st could be the stem of a record's defining file:
// its last segment ends in no reserved suffix.
func plain(st string) bool {
	base := st[strings.LastIndex(st, "/")+1:]
	for _, s := range model.ReservedSuffixes {
		if strings.HasSuffix(base, s) {
			return false
		}
	}
	return true
}

// match finds the longest suffix of l that rest ends with and leaves a
// plain stem, and that stem: a suffix that ends another comes before it in
// suffixes (".json", ".index.json"), so the last that fits is the longest.
func match(l jsonld.Layout, rest string) (Role, string) {
	for _, s := range slices.Backward(suffixes[l]) {
		if st, ok := strings.CutSuffix(rest, s.Key); ok && st != "" && plain(st) {
			if s.Defining {
				return Defining, st
			}
			return Secondary, st
		}
	}
	return NotRecord, ""
}

// Candidates returns every valid ID whose files have stem st ("a/b/main":
// a/b:main and a:b/main), shortest name first, reading each segment as
// written (a Shortened stem's ID may be none of them).
func Candidates(st string) []model.ID {
	segs := strings.Split(st, "/")
	var out []model.ID
	for i := 1; i < len(segs); i++ {
		id := model.ID{Name: strings.Join(segs[:i], "/"), Branch: strings.Join(segs[i:], "/")}
		if id.Validate() == nil {
			out = append(out, id)
		}
	}
	return out
}

// PathDefault is the ID a stem stands for when its file names none: the
// last segment is the branch, the rest the name (as Fluree nests names).
func PathDefault(st string) (model.ID, bool) {
	i := strings.LastIndex(st, "/")
	if i < 0 {
		return model.ID{}, false
	}
	id := model.ID{Name: st[:i], Branch: st[i+1:]}
	return id, id.Validate() == nil
}
