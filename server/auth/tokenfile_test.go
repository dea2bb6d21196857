package auth_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"nameservice.dev/nameservice/server/auth"
)

// The token file format: hashed tokens only.
func TestLoadTokenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(p, []byte(`{"tokens":[{"name":"a","sha256":"`+auth.HashToken("x")+`","read":[""],"write":["t/"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	toks, err := auth.LoadTokenFile(p)
	if err != nil || len(toks) != 1 || toks[0].Write[0] != "t/" {
		t.Fatalf("LoadTokenFile = %+v, %v", toks, err)
	}
	if _, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{{Name: "a", SHA256: "x"}}}); err == nil {
		t.Fatal("a token entry whose sha256 is not a hash was accepted")
	}
	if _, err := auth.NewAuthenticator(auth.Config{TrustedIssuers: []string{"did:key:zNotAKey"}}); err == nil {
		t.Fatal("a malformed trusted issuer was accepted")
	}
}

// A static token entry without any scope, a repeated name or a repeated
// hash is refused, naming the entries.
func TestAuthTokenEntriesRefused(t *testing.T) {
	h := auth.HashToken("x")
	for name, c := range map[string]struct {
		tokens []auth.TokenEntry
		want   string
	}{
		"no scope":      {[]auth.TokenEntry{{Name: "a", SHA256: h}}, `token "a": no read or write scope`},
		"repeated hash": {[]auth.TokenEntry{{Name: "a", SHA256: h, Read: []string{"a/"}}, {Name: "b", SHA256: strings.ToUpper(h), Read: []string{""}}}, `token "b": the same sha256 as token "a"`},
		"repeated name": {[]auth.TokenEntry{{Name: "a", SHA256: h, Read: []string{"a/"}}, {Name: "a", SHA256: auth.HashToken("y"), Read: []string{""}}}, `token "a": the name is already token "a"'s`},
	} {
		_, err := auth.NewAuthenticator(auth.Config{Tokens: c.tokens})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}

// ParseTokenFile names the line of what it refuses, and of each entry.
func TestParseTokenFile(t *testing.T) {
	h := auth.HashToken("x")
	good := "{\n  \"tokens\": [\n    {\"name\": \"a\", \"sha256\": \"" + h + "\", \"read\": [\"\"]},\n\n    {\"name\": \"b\",\n     \"sha256\": \"" + auth.HashToken("y") + "\", \"write\": [\"b/\"], \"admin\": [\"b/\"]}\n  ]\n}\n"
	toks, err := auth.ParseTokenFile([]byte(good))
	if err != nil || len(toks) != 2 || toks[0].Line != 3 || toks[1].Line != 5 || toks[1].Write[0] != "b/" || toks[1].Admin[0] != "b/" {
		t.Fatalf("ParseTokenFile = %+v, %v", toks, err)
	}
	for name, c := range map[string]struct{ file, want string }{
		"case-variant field": {"{\"tokens\": [\n{\"Name\": \"a\", \"sha256\": \"" + h + "\"}]}", `token at line 2: unknown field "Name"`},
		"repeated field":     {"{\"tokens\": [\n\n{\"name\": \"a\", \"read\": [\"a/\"], \"read\": [\"\"]}]}", "token at line 3: json: duplicate key 'read'"},
		"unknown top field":  {"{\"tokens\": [],\n \"admin\": true}", `line 2: unexpected field "admin"`},
		"repeated tokens":    {"{\"tokens\": [],\n \"tokens\": []}", `line 2: unexpected field "tokens"`},
		"trailing data":      {"{\"tokens\": []}\n{}", "line 2: data after the token object"},
		"not an object":      {"[]", "line 1: want {"},
	} {
		if _, err := auth.ParseTokenFile([]byte(c.file)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}

// FuzzParseTokenFile: what ParseTokenFile accepts, encoding/json reads the
// same (ParseTokenFile is the stricter: exact and unrepeated names), and
// every entry's line is in the file.
func FuzzParseTokenFile(f *testing.F) {
	h := auth.HashToken("x")
	f.Add("{\"tokens\": [\n{\"name\": \"a\", \"sha256\": \"" + h + "\", \"read\": [\"\"], \"write\": []}\n]}")
	f.Add(`{"tokens":[{"name":"a","name":"b"}]}`)
	f.Add(`{"tokens":[{"NAME":"a"}],"x":1}`)
	f.Add("{\"tokens\":[]}\n\n")
	f.Fuzz(func(t *testing.T, file string) {
		entries, err := auth.ParseTokenFile([]byte(file))
		if err != nil {
			return
		}
		var std auth.TokenFile
		dec := json.NewDecoder(strings.NewReader(file))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", file, err)
		}
		lines := strings.Count(file, "\n") + 1
		if len(std.Tokens) != len(entries) {
			t.Fatalf("%q: %d entries, encoding/json reads %d", file, len(entries), len(std.Tokens))
		}
		for i, e := range entries {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("%q: entry %d at line %d of %d", file, i, e.Line, lines)
			}
			e.Line = 0
			if !reflect.DeepEqual(e, std.Tokens[i]) {
				t.Fatalf("%q: entry %d is %+v, encoding/json reads %+v", file, i, e, std.Tokens[i])
			}
		}
	})
}
