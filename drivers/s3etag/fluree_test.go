package s3etag_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// flNsFile is Fluree v4.1.6's NsFileV2 (fluree-db-nameservice, ns_format.rs):
// the members it reads and writes, in its order, skipped when it skips them.
// Fluree's StorageNameService reads a main file into it, changes it, and
// writes it back whole (serde_json::to_vec_pretty): every member it does not
// know is dropped.
type flNsFile struct {
	Context json.RawMessage `json:"@context"`
	ID      string          `json:"@id"`
	Type    []string        `json:"@type"`
	Ledger  struct {
		ID string `json:"@id"`
	} `json:"f:ledger"`
	Branch            string                      `json:"f:branch"`
	CommitCid         *string                     `json:"f:commitCid,omitempty"`
	T                 int64                       `json:"f:t"`
	Index             *flIndexRef                 `json:"f:ledgerIndex,omitempty"`
	Status            string                      `json:"f:status"`
	DefaultContextCid *string                     `json:"f:defaultContextCid,omitempty"`
	StatusV           *int64                      `json:"f:statusV,omitempty"`
	StatusMeta        *map[string]json.RawMessage `json:"f:statusMeta,omitempty"`
	ConfigV           *int64                      `json:"f:configV,omitempty"`
	ConfigMeta        *map[string]json.RawMessage `json:"f:configMeta,omitempty"`
	ConfigCid         *string                     `json:"f:configCid,omitempty"`
	SourceBranch      *string                     `json:"f:sourceBranch,omitempty"`
	BranchPoint       *json.RawMessage            `json:"f:branchPoint,omitempty"`
	Branches          uint32                      `json:"f:branches,omitempty"`
}

// flIndexRef is Fluree's IndexRef.
type flIndexRef struct {
	Cid *string `json:"f:cid,omitempty"`
	T   int64   `json:"f:t"`
}

// flFile is a Fluree v4 StorageNameService over one bucket, writing the
// files as its code does.
type flFile struct {
	t      *testing.T
	ctx    context.Context
	d      *s3etag.Driver
	bucket string
}

func (f flFile) get(key string) []byte {
	f.t.Helper()
	out, err := f.d.Client().GetObject(f.ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: &key})
	testenv.Must(f.t, err)
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	testenv.Must(f.t, err)
	return b
}

// put writes v as serde_json::to_vec_pretty does: two-space indent, no
// HTML escaping, no newline at the end.
func (f flFile) put(key string, v any) {
	f.t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	testenv.Must(f.t, enc.Encode(v))
	_, err := f.d.Client().PutObject(f.ctx, &s3.PutObjectInput{Bucket: &f.bucket, Key: aws.String(key),
		Body: bytes.NewReader(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))})
	testenv.Must(f.t, err)
}

// main reads ledger name's main file as Fluree's deserializer does.
func (f flFile) main(name string) flNsFile {
	f.t.Helper()
	var m flNsFile
	testenv.Must(f.t, json.Unmarshal(f.get("ns@v2/"+name+"/main.json"), &m))
	return m
}

// publishCommit is CommitPublisher::publish_commit: the main file read,
// commit_cid and t set (when t is newer), written back whole.
func (f flFile) publishCommit(name string, t int64, cid string) {
	m := f.main(name)
	if t > m.T {
		m.CommitCid, m.T = &cid, t
		f.put("ns@v2/"+name+"/main.json", m)
	}
}

// publishIndex is IndexPublisher::publish_index: a new NsIndexFileV2 when
// t is above the index file's.
func (f flFile) publishIndex(name string, t int64, cid string) {
	var cur struct {
		Index *flIndexRef `json:"f:ledgerIndex"`
	}
	_ = json.Unmarshal(f.get("ns@v2/"+name+"/main.index.json"), &cur)
	if cur.Index != nil && t <= cur.Index.T {
		return
	}
	f.put("ns@v2/"+name+"/main.index.json", struct {
		Context map[string]string `json:"@context"`
		Index   flIndexRef        `json:"f:ledgerIndex"`
	}{map[string]string{"f": "https://ns.flur.ee/db#"}, flIndexRef{Cid: &cid, T: t}})
}

// index is the index Fluree's load_record reads: the main file's inline
// index, unless the index file's t is equal or higher.
func (f flFile) index(name string) flIndexRef {
	idx := flIndexRef{}
	if m := f.main(name); m.Index != nil {
		idx = *m.Index
	}
	var file struct {
		Index *flIndexRef `json:"f:ledgerIndex"`
	}
	out, err := f.d.Client().GetObject(f.ctx, &s3.GetObjectInput{Bucket: &f.bucket, Key: aws.String("ns@v2/" + name + "/main.index.json")})
	if err == nil {
		b, _ := io.ReadAll(out.Body)
		out.Body.Close()
		testenv.Must(f.t, json.Unmarshal(b, &file))
		if file.Index != nil && file.Index.T >= idx.T {
			idx = *file.Index
		}
	}
	return idx
}

// TestFlureeRewrites: Fluree's StorageNameService writes whole files that
// carry none of this project's members (the incarnation token, the write
// IDs): a new index file on every index publish, and the main file without
// them on every commit publish. Both sides must still read the same index,
// and a push here must not move Fluree's index back.
func TestFlureeRewrites(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	cfg.Dialect = jsonld.FlureeV4
	d, err := s3etag.Open(ctx, cfg)
	testenv.Must(t, err)
	fl := flFile{t: t, ctx: ctx, d: d, bucket: bucket}
	ns := nameservice.New(d)
	cid := testenv.CID
	same := func(name, after string, want model.Value) {
		t.Helper()
		rec, err := nameservice.New(d).Lookup(ctx, name) // a fresh read, not this client's cache
		testenv.Must(t, err)
		if !rec.Index.Equal(want) {
			t.Errorf("%s: we read index %v, want %v", after, rec.Index, want)
		}
		r, _ := want.Ref()
		if got := fl.index(name); got.T != want.V || got.Cid == nil || *got.Cid != r.Address {
			t.Errorf("%s: Fluree reads index %+v, want %v", after, got, want)
		}
	}

	// Created here, then Fluree's commit and index publishes (the main file
	// written back without the token, then an index file without one). An
	// index file without a token beside a main file with one stays debris
	// (docs/format.md): Fluree indexes what it committed.
	testenv.Must(t, ns.Init(ctx, "a"))
	_, err = ns.PublishIndex(ctx, "a", 1, cid("a1"))
	testenv.Must(t, err)
	fl.publishCommit("a", 1, cid("ca1"))
	fl.publishIndex("a", 2, cid("a2"))
	same("a", "Fluree's index publish after ours", model.RefValue(cid("a2"), 2))
	out, err := ns.PublishIndex(ctx, "a", 1, cid("a1-again"))
	testenv.Must(t, err)
	if out.Applied {
		t.Errorf("our index publish at t 1 over Fluree's at t 2 applied")
	}
	same("a", "our stale index publish", model.RefValue(cid("a2"), 2))
	_, err = ns.PublishIndex(ctx, "a", 3, cid("a3"))
	testenv.Must(t, err)
	same("a", "our index publish after Fluree's", model.RefValue(cid("a3"), 3))

	// Created here with an index, then Fluree's commit publish (the main
	// file written back without the token).
	testenv.Must(t, ns.Init(ctx, "b"))
	_, err = ns.PublishIndex(ctx, "b", 1, cid("b1"))
	testenv.Must(t, err)
	fl.publishCommit("b", 1, cid("c1"))
	same("b", "Fluree's commit publish after our index", model.RefValue(cid("b1"), 1))
	out, err = ns.PublishIndex(ctx, "b", 1, cid("b1-again"))
	testenv.Must(t, err)
	if out.Applied {
		t.Errorf("our index publish at t 1 over the index at t 1 applied")
	}
	_, err = ns.PublishIndex(ctx, "b", 2, cid("b2"))
	testenv.Must(t, err)
	same("b", "our index publish after Fluree's commit", model.RefValue(cid("b2"), 2))
	rec, err := ns.Lookup(ctx, "b")
	testenv.Must(t, err)
	if want := model.RefValue(cid("c1"), 1); !rec.Head.Equal(want) {
		t.Errorf("we read head %v, want %v", rec.Head, want)
	}
}
