package fs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/model"
)

// flureePublishCommit rewrites a main file as Fluree v4's file nameservice
// publishes a commit (publish_commit): the file is read into its NsFileV2
// struct, which keeps only the members it names, and written back.
func flureePublishCommit(t *testing.T, path, cid string, commitT int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, k := range []string{"@context", "@id", "@type", "f:ledger", "f:branch", "f:commitCid", "f:t", "f:ledgerIndex",
		"f:status", "f:defaultContextCid", "f:statusV", "f:statusMeta", "f:configV", "f:configMeta", "f:configCid",
		"f:sourceBranch", "f:branchPoint", "f:branches"} {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	out["f:commitCid"], out["f:t"] = cid, commitT
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".fluree"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestFlureeRewriteKeepsIndex: a ledger created and indexed through this
// driver, whose main file Fluree then rewrites to publish a commit (its
// struct drops the members it does not know, f:incarnation among them),
// still reads with the index it was pushed, and a stale index push is
// refused.
func TestFlureeRewriteKeepsIndex(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, err := nsfs.Open(ctx, nsfs.Config{Dir: dir, Dialect: "fluree-v4"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id := model.ID{Name: "db", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	if out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("bafyc1", 1)); err != nil || !out.Applied {
		t.Fatalf("publish: %+v %v", out, err)
	}
	if out, err := d.Update(ctx, id, model.Index, driver.IfAbove(), model.RefValue("bafyi5", 5)); err != nil || !out.Applied {
		t.Fatalf("index: %+v %v", out, err)
	}
	flureePublishCommit(t, filepath.Join(dir, "ns@v2", "db", "main.json"), "bafyc6", 6)
	d2, err := nsfs.Open(ctx, nsfs.Config{Dir: dir, Dialect: "fluree-v4"})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	rec, err := d2.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Head.V != 6 || rec.Index == nil || rec.Index.V != 5 {
		t.Errorf("after Fluree's publish: head %v, index %v; want head 6, index 5", rec.Head, rec.Index)
	}
	out, err := d2.Update(ctx, id, model.Index, driver.IfAbove(), model.RefValue("bafyi3", 3))
	if err != nil || out.Applied {
		t.Errorf("a stale index push (3 after 5): %+v %v; want refused", out, err)
	}
}

// TestFlureeIndexOnCreatedLedger: Fluree's indexer publishes an index
// (publish_index: an index file of its own, without f:incarnation) for a
// ledger created through this driver: the record reads with that index,
// and a stale index push is refused.
func TestFlureeIndexOnCreatedLedger(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, err := nsfs.Open(ctx, nsfs.Config{Dir: dir, Dialect: "fluree-v4"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id := model.ID{Name: "db", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	if out, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("bafyc1", 1)); err != nil || !out.Applied {
		t.Fatalf("publish: %+v %v", out, err)
	}
	index := `{"@context":{"f":"https://ns.flur.ee/db#"},"f:ledgerIndex":{"f:cid":"bafyi5","f:t":5}}`
	if err := os.WriteFile(filepath.Join(dir, "ns@v2", "db", "main.index.json"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	d2, err := nsfs.Open(ctx, nsfs.Config{Dir: dir, Dialect: "fluree-v4"})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	rec, err := d2.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Index == nil || rec.Index.V != 5 {
		t.Errorf("after Fluree's index publish: index %v; want 5", rec.Index)
	}
	out, err := d2.Update(ctx, id, model.Index, driver.IfAbove(), model.RefValue("bafyi3", 3))
	if err != nil || out.Applied {
		t.Errorf("a stale index push (3 after 5): %+v %v; want refused", out, err)
	}
}
