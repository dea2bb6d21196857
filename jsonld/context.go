package jsonld

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"nameservice.dev/nameservice/internal/jsonx"
)

// member is one member of a JSON object, in file order.
type member struct {
	key string          // as written
	raw json.RawMessage // the value, compacted
}

// parseObject decodes a JSON object keeping its members in order, each
// value compacted. It returns an error when data is not exactly one JSON
// object or a key repeats.
func parseObject(data []byte) ([]member, error) {
	compact := jsontext.Value(slices.Clone(data))
	if compact.Compact() != nil { // it allows invalid UTF-8 and repeated names, as json.Valid does
		return tokenObject(data)
	}
	var out []member
	seen := map[string]bool{}
	err := jsonx.EachMember(compact, func(key string, raw []byte) error {
		if seen[key] {
			return fmt.Errorf("member %q appears twice", key)
		}
		seen[key] = true
		out = append(out, member{key: key, raw: raw})
		return nil
	})
	return out, err
}

// tokenObject is parseObject with encoding/json's tokens, whose errors name
// what is wrong with invalid text.
func tokenObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %v", err)
		}
		key, _ := tok.(string) // in a key's place, Token returns a string or an error
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("not JSON: member %q: %v", key, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("member %q appears twice", key)
		}
		seen[key] = true
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, fmt.Errorf("not JSON: member %q: %v", key, err)
		}
		out = append(out, member{key: key, raw: buf.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return out, nil
}

// jsonContext is the part of a JSON-LD @context this codec understands:
// @vocab, and prefixes or terms bound to IRIs.
type jsonContext struct {
	vocab string
	terms map[string]string // prefix or term -> IRI
}

// parseContext reads a @context value: a string, an object or an array of
// them. Remote contexts other than the vocabulary are not fetched; keys that
// only they would define stay unresolved (and are kept as unknown members).
func parseContext(raw json.RawMessage) (*jsonContext, error) {
	c := &jsonContext{terms: map[string]string{}}
	if len(raw) == 0 {
		return c, nil
	}
	return c, c.add(raw)
}

func (c *jsonContext) add(raw json.RawMessage) error {
	switch {
	case bytes.Equal(raw, []byte("null")):
		c.vocab, c.terms = "", map[string]string{}
		return nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("@context: %v", err)
		}
		if s == Vocab || s == strings.TrimSuffix(Vocab, "#") {
			c.vocab = Vocab // a string @context naming the vocabulary itself
		}
		return nil
	case raw[0] == '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("@context: %v", err)
		}
		for _, e := range list { // each the text of one value: never empty
			if err := c.add(e); err != nil {
				return err
			}
		}
		return nil
	case raw[0] == '{':
		return c.addObject(raw)
	}
	return fmt.Errorf("@context is neither a string, an object nor an array")
}

func (c *jsonContext) addObject(raw json.RawMessage) error {
	members, err := parseObject(raw)
	if err != nil {
		return fmt.Errorf("@context: %v", err)
	}
	defs := map[string]string{}
	for _, m := range members {
		iri, ok := termIRI(m.raw)
		switch {
		case m.key == "@vocab":
			c.vocab = iri // "" when the value is no IRI
		case strings.HasPrefix(m.key, "@"):
			// @base, @version, @language...: nothing to resolve here.
		case ok:
			defs[m.key] = iri
		default:
			delete(c.terms, m.key)
		}
	}
	// A definition may itself be a compact IRI ("ledgerCommit": "f:ledgerCommit").
	maps.Copy(c.terms, defs)
	for k, v := range defs {
		c.terms[k] = c.expandIRI(v, false)
	}
	return nil
}

// termIRI returns the IRI of a term definition: "IRI" or {"@id": "IRI"}.
func termIRI(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var obj struct {
		ID *string `json:"@id"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.ID != nil {
		return *obj.ID, true
	}
	return "", false
}

// expandKey expands a member key (or a @type value) to an IRI: keywords stay
// as they are, terms and compact IRIs resolve through the context, and plain
// words fall back to @vocab. A key it cannot resolve comes back unchanged.
func (c *jsonContext) expandKey(key string) string {
	return c.expandIRI(key, true)
}

func (c *jsonContext) expandIRI(s string, useVocab bool) string {
	if strings.HasPrefix(s, "@") {
		return s
	}
	if iri, ok := c.terms[s]; ok {
		return iri
	}
	if prefix, suffix, ok := strings.Cut(s, ":"); ok {
		if strings.HasPrefix(suffix, "//") {
			return s // an absolute IRI
		}
		if iri, ok := c.terms[prefix]; ok {
			return iri + suffix
		}
		return s
	}
	if useVocab && c.vocab != "" {
		return c.vocab + s
	}
	return s
}

// local returns the name of an expanded IRI inside the vocabulary.
func local(iri string) (string, bool) {
	name, ok := strings.CutPrefix(iri, Vocab)
	return name, ok && name != ""
}

// compactIRI returns the model's form of a type IRI: "db:Name" for the
// vocabulary, the string as written otherwise.
func (c *jsonContext) compactIRI(s string) string {
	if name, ok := strings.CutPrefix(c.expandKey(s), Vocab); ok {
		return ModelPrefix + ":" + name
	}
	return s
}
