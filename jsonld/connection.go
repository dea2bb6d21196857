package jsonld

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/model"
)

// SystemVocab is the vocabulary of Fluree JSON-LD connection configs.
const SystemVocab = "https://ns.flur.ee/system#"

// ConnectionURL reads a Fluree JSON-LD connection config (an @graph of
// Connection, Storage and Publisher nodes) and returns the URL of the
// nameservice it names:
//
//   - a Publisher with dynamodbTable: dynamodb://TABLE?region=R&endpoint=E&timeout=Nms
//     (each parameter only when the config sets it);
//   - a Publisher with storage, or failing a Publisher the Connection's
//     commitStorage, else its indexStorage: file:///PATH for filePath
//     (file://./PATH when relative), s3://BUCKET/PREFIX?endpoint=E for
//     s3Bucket, mem:// for a storage with neither.
//
// The Publisher is the Connection's primaryPublisher, else the only
// Publisher node. Values may be ConfigurationValues ({"envVar", "defaultVal"}),
// read from the environment. It returns an error wrapping
// model.ErrInvalidArgument that says what is missing or ambiguous.
func ConnectionURL(data []byte) (string, error) {
	cfg, err := parseConfig(data)
	u := ""
	if err == nil {
		u, err = cfg.url()
	}
	if err != nil {
		return "", fmt.Errorf("%w: connection config: %v", model.ErrInvalidArgument, err)
	}
	return u, nil
}

// node is one node of the config graph, keyed by local names.
type node struct {
	id     string
	types  []string
	fields map[string]any
}

type config struct {
	nodes []*node
	byID  map[string]*node
}

func parseConfig(data []byte) (*config, error) {
	members, err := parseObject(data)
	if err != nil {
		return nil, err
	}
	c := &config{byID: map[string]*node{}}
	var ctxRaw, graphRaw json.RawMessage
	for _, m := range members {
		switch m.key {
		case "@context":
			ctxRaw = m.raw
		case "@graph":
			graphRaw = m.raw
		}
	}
	ctx, err := parseContext(ctxRaw)
	if err != nil {
		return nil, err
	}
	if graphRaw == nil {
		graphRaw = data // a single node
	}
	v, err := value(graphRaw)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("@graph holds a %s, not a node", jsonx.Kind(e))
		}
		n := &node{fields: map[string]any{}}
		for k, v := range m {
			switch k {
			case "@id":
				n.id, _ = v.(string)
			case "@type":
				ts, _ := asStrings(v)
				for _, t := range ts {
					n.types = append(n.types, systemName(ctx, t))
				}
			case "@context":
			default:
				n.fields[systemName(ctx, k)] = v
			}
		}
		c.nodes = append(c.nodes, n)
		if n.id != "" {
			c.byID[n.id] = n
		}
	}
	return c, nil
}

// systemName returns the name of a key or type in the system vocabulary
// ("dynamodbTable"), whatever prefix or @vocab spelled it.
func systemName(ctx *jsonContext, s string) string {
	iri := ctx.expandKey(s)
	if name, ok := strings.CutPrefix(iri, SystemVocab); ok {
		return name
	}
	if i := strings.LastIndexAny(s, ":#/"); i >= 0 && i+1 < len(s) {
		return s[i+1:]
	}
	return s
}

func (c *config) ofType(t string) []*node {
	return slices.DeleteFunc(slices.Clone(c.nodes), func(n *node) bool { return !slices.Contains(n.types, t) })
}

// ref follows a reference field ({"@id": "x"} or "x") to its node.
func (c *config) ref(n *node, field string) (*node, error) {
	v, ok := n.fields[field]
	if !ok || v == nil {
		return nil, nil
	}
	id, ok := asRef(v)
	if !ok {
		return nil, fmt.Errorf("%s of %q is not a reference", field, n.id)
	}
	target := c.byID[id]
	if target == nil {
		return nil, fmt.Errorf("%s of %q names node %q, which the config does not have", field, n.id, id)
	}
	return target, nil
}

func (c *config) url() (string, error) {
	pub, err := c.publisher()
	if err != nil {
		return "", err
	}
	if pub != nil {
		if _, ok := pub.fields["dynamodbTable"]; ok {
			return dynamoURL(pub)
		}
		st, err := c.ref(pub, "storage")
		if err != nil {
			return "", err
		}
		if st == nil {
			return "", fmt.Errorf("publisher %q has neither dynamodbTable nor storage", pub.id)
		}
		return storageURL(st)
	}
	st, err := c.defaultStorage()
	if err != nil {
		return "", err
	}
	return storageURL(st)
}

// publisher returns the Connection's primaryPublisher, else the only
// Publisher, else nil.
func (c *config) publisher() (*node, error) {
	conns := c.ofType("Connection")
	if len(conns) > 1 {
		return nil, fmt.Errorf("%d Connection nodes; want one", len(conns))
	}
	if len(conns) == 1 {
		p, err := c.ref(conns[0], "primaryPublisher")
		if p != nil || err != nil {
			return p, err
		}
	}
	pubs := c.ofType("Publisher")
	switch len(pubs) {
	case 0:
		return nil, nil
	case 1:
		return pubs[0], nil
	}
	return nil, fmt.Errorf("%d Publisher nodes and no primaryPublisher to choose one", len(pubs))
}

// defaultStorage is where Fluree keeps its nameservice without a
// Publisher: the commit storage, else the index storage, else the only
// Storage node.
func (c *config) defaultStorage() (*node, error) {
	if conns := c.ofType("Connection"); len(conns) == 1 {
		for _, f := range []string{"commitStorage", "indexStorage"} {
			st, err := c.ref(conns[0], f)
			if st != nil || err != nil {
				return st, err
			}
		}
	}
	if sts := c.ofType("Storage"); len(sts) == 1 {
		return sts[0], nil
	}
	return nil, fmt.Errorf("no Publisher, and no single Storage to hold the nameservice")
}

// field reads a string field, resolving a ConfigurationValue.
func field(n *node, name string) (string, bool, error) {
	v, ok := n.fields[name]
	if !ok || v == nil {
		return "", false, nil
	}
	if m, ok := v.(map[string]any); ok && (m["envVar"] != nil || m["defaultVal"] != nil || m["javaProp"] != nil) {
		for _, k := range []string{"envVar", "javaProp"} {
			if env, ok := m[k].(string); ok {
				if s, ok := os.LookupEnv(env); ok {
					return s, true, nil
				}
			}
		}
		if d, ok := m["defaultVal"]; ok && d != nil {
			return fmt.Sprint(d), true, nil
		}
		return "", false, fmt.Errorf("%s of %q: its environment variable is unset and it has no defaultVal", name, n.id)
	}
	switch x := unwrap(v).(type) {
	case string, json.Number, bool:
		return fmt.Sprint(x), true, nil
	}
	return "", false, fmt.Errorf("%s of %q is a %s, not a value", name, n.id, jsonx.Kind(v))
}

func dynamoURL(n *node) (string, error) {
	table, _, err := field(n, "dynamodbTable")
	if err != nil {
		return "", err
	}
	if !validName(table, 3) {
		return "", fmt.Errorf("publisher %q: dynamodbTable %q is not a DynamoDB table name (3 to 255 letters, digits, '_', '.', '-')", n.id, table)
	}
	var q []string
	for _, p := range []struct{ field, param, unit string }{
		{"dynamodbRegion", "region", ""}, {"dynamodbEndpoint", "endpoint", ""}, {"dynamodbTimeoutMs", "timeout", "ms"},
	} {
		v, ok, err := field(n, p.field)
		if err != nil {
			return "", err
		}
		if ok && v != "" {
			q = append(q, p.param+"="+url.QueryEscape(v+p.unit))
		}
	}
	return (&url.URL{Scheme: "dynamodb", Host: table, RawQuery: strings.Join(q, "&")}).String(), nil
}

func storageURL(n *node) (string, error) {
	if path, ok, err := field(n, "filePath"); err != nil || ok {
		if err != nil {
			return "", err
		}
		return fileURL(path)
	}
	if bucket, ok, err := field(n, "s3Bucket"); err != nil || ok {
		if err != nil {
			return "", err
		}
		return s3URL(n, bucket)
	}
	for k := range n.fields {
		if strings.HasPrefix(k, "ipfs") {
			return "", fmt.Errorf("storage %q is IPFS, which has no nameservice driver", n.id)
		}
	}
	return "mem://", nil
}

func fileURL(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("empty filePath")
	}
	clean := filepath.ToSlash(filepath.Clean(path))
	if filepath.IsAbs(path) {
		return (&url.URL{Scheme: "file", Path: clean}).String(), nil
	}
	if clean == "." {
		return "file://.", nil
	}
	return "file://./" + (&url.URL{Path: clean}).EscapedPath(), nil
}

func s3URL(n *node, bucket string) (string, error) {
	if !validName(bucket, 1) {
		return "", fmt.Errorf("storage %q: s3Bucket %q is not a bucket name (letters, digits, '_', '.', '-')", n.id, bucket)
	}
	prefix, _, err := field(n, "s3Prefix")
	endpoint, _, err2 := field(n, "s3Endpoint")
	if err := cmp.Or(err, err2); err != nil {
		return "", err
	}
	u := &url.URL{Scheme: "s3", Host: bucket}
	if p := strings.Trim(prefix, "/"); p != "" {
		u.Path = "/" + p
	}
	if endpoint != "" {
		u.RawQuery = "endpoint=" + url.QueryEscape(endpoint)
	}
	return u.String(), nil
}

// validName reports whether s is a table or bucket name that can stand as
// a URL host unescaped: at least min and at most 255 ASCII letters, digits,
// '_', '.' and '-' (DynamoDB's rule for table names; S3 bucket names are a
// subset).
func validName(s string, min int) bool {
	return len(s) >= min && len(s) <= 255 && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
	})
}
