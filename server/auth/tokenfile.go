package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	josejson "github.com/go-jose/go-jose/v4/json"
)

// TokenFile is the JSON file of static tokens:
//
//	{"tokens": [{"name": "indexer", "sha256": "<hex of SHA-256 of the token>",
//	             "read": ["tenant/"], "write": ["tenant/"], "admin": []}]}
//
// read, write and admin are ID prefixes; "" covers every ID. admin allows
// the administrator operations (reset-head); it is usually left out.
type TokenFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

// TokenEntry is one static token.
type TokenEntry struct {
	Name   string   `json:"name"`
	SHA256 string   `json:"sha256"`
	Read   []string `json:"read"`
	Write  []string `json:"write"`
	Admin  []string `json:"admin,omitempty"`
	// Line is the line of its token file the entry starts on (0 when it
	// was not read from one); errors about the entry name it.
	Line int `json:"-"`
}

// tokenFields are the names of TokenEntry's fields in a token file, read
// from its JSON tags so that the parser accepts exactly what the type holds.
var tokenFields = func() (names []string) {
	for f := range reflect.TypeFor[TokenEntry]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}()

// where names the i-th entry t in errors: by name, and by line when it
// came from a file.
func (t TokenEntry) where(i int) string {
	switch {
	case t.Name != "" && t.Line > 0:
		return fmt.Sprintf("token %q (line %d)", t.Name, t.Line)
	case t.Name != "":
		return fmt.Sprintf("token %q", t.Name)
	case t.Line > 0:
		return fmt.Sprintf("token at line %d", t.Line)
	}
	return fmt.Sprintf("token %d", i+1)
}

// checkTokens returns the tokens by hash, refusing an entry whose hash is
// not 64 hex digits, whose name is missing or repeated, whose hash repeats
// another's (one token cannot be two principals), or that has no scope.
func checkTokens(entries []TokenEntry) (map[[32]byte]*Principal, error) {
	byHash := map[[32]byte]*Principal{}
	names := map[string]TokenEntry{}
	for i, t := range entries {
		if t.Name == "" {
			return nil, fmt.Errorf("%s: a name is required", t.where(i))
		}
		if prev, dup := names[t.Name]; dup {
			return nil, fmt.Errorf("%s: the name is already %s's", t.where(i), prev.where(0))
		}
		names[t.Name] = t
		raw, err := hex.DecodeString(t.SHA256)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("%s: sha256 must be 64 hex digits (the SHA-256 of the token)", t.where(i))
		}
		h := [32]byte(raw)
		if prev, dup := byHash[h]; dup {
			return nil, fmt.Errorf("%s: the same sha256 as %s: every token must be distinct",
				t.where(i), names[prev.Name].where(0))
		}
		if len(t.Read) == 0 && len(t.Write) == 0 {
			return nil, fmt.Errorf("%s: no read or write scope: it would authorize nothing", t.where(i))
		}
		byHash[h] = &Principal{Name: t.Name, Read: slices.Clone(t.Read), Write: slices.Clone(t.Write), Admin: slices.Clone(t.Admin),
			storageAll: slices.Contains(t.Read, ""), key: "token:" + t.Name}
	}
	return byHash, nil
}

// LoadTokenFile reads a TokenFile (see ParseTokenFile).
func LoadTokenFile(path string) ([]TokenEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	entries, err := ParseTokenFile(b)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return entries, nil
}

// ParseTokenFile parses a TokenFile, recording the line each entry starts
// on. Names are matched exactly; an unknown or repeated name, or data after
// the object, is an error naming its line.
func ParseTokenFile(b []byte) ([]TokenEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	at := func() int { return lineOf(b, dec.InputOffset()) }
	if err := wantDelim(dec, '{'); err != nil {
		return nil, fmt.Errorf("line %d: %w", at(), err)
	}
	var entries []TokenEntry
	seen := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", at(), err)
		}
		if tok != "tokens" || seen {
			return nil, fmt.Errorf("line %d: unexpected field %q: the file holds one field, \"tokens\"", at(), tok)
		}
		seen = true
		if err := wantDelim(dec, '['); err != nil {
			return nil, fmt.Errorf("line %d: tokens: %w", at(), err)
		}
		for dec.More() {
			line := lineOf(b, valueStart(b, dec.InputOffset()))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			e, err := parseTokenEntry(raw)
			if err != nil {
				return nil, fmt.Errorf("token at line %d: %w", line, err)
			}
			e.Line = line
			entries = append(entries, e)
		}
		if err := wantDelim(dec, ']'); err != nil {
			return nil, fmt.Errorf("line %d: tokens: %w", at(), err)
		}
	}
	if err := wantDelim(dec, '}'); err != nil {
		return nil, fmt.Errorf("line %d: %w", at(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("line %d: data after the token object", at())
	}
	return entries, nil
}

// parseTokenEntry decodes one entry with exact, unrepeated field names:
// go-jose's JSON, where encoding/json lets the last win and ignores case.
func parseTokenEntry(raw []byte) (TokenEntry, error) {
	var fields map[string]josejson.RawMessage
	if err := josejson.Unmarshal(raw, &fields); err != nil {
		return TokenEntry{}, err
	}
	for k := range fields {
		if !slices.Contains(tokenFields, k) {
			return TokenEntry{}, fmt.Errorf("unknown field %q (an entry holds %s)", k, strings.Join(tokenFields, ", "))
		}
	}
	var e TokenEntry
	err := josejson.Unmarshal(raw, &e)
	return e, err
}

func wantDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return errors.New("want " + d.String())
	}
	return nil
}

// valueStart returns the offset of the next value at or after off: past
// white space and the separator the decoder has not consumed yet.
func valueStart(b []byte, off int64) int64 {
	return int64(len(b)) - int64(len(bytes.TrimLeft(b[off:], " \t\r\n,")))
}

func lineOf(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

// HashToken returns the hex SHA-256 of a token, as a token file stores it.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}
