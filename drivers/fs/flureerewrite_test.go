package fs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"nameservice.dev/nameservice"

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

// TestFlureeRewriteKeepsBranchCounted: a branch create whose writer stopped
// before clearing its step in the source is settled by the next branch
// operation on that source: the branch exists (Fluree has since published a
// commit to it, rewriting its main file without f:incarnation), so the
// count keeps it.
func TestFlureeRewriteKeepsBranchCounted(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	d, err := nsfs.Open(ctx, nsfs.Config{Dir: dir, Dialect: "fluree-v4"})
	if err != nil {
		t.Fatal(err)
	}
	ns := nameservice.New(d)
	defer ns.Close()
	if err := ns.Init(ctx, "db:main"); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.PublishCommit(ctx, "db:main", 1, "bafyc1"); err != nil {
		t.Fatal(err)
	}
	const tok = "devcreate1"
	if _, err := ns.CreateBranch(driver.WithWrite(ctx, driver.Write{ID: tok}), "db:dev", nameservice.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The creator stopped before clearing its step: it is still recorded,
	// older than a minute.
	mainPath := filepath.Join(dir, "ns@v2", "db", "main.json")
	data, err := os.ReadFile(mainPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["f:branchOps"] = []any{map[string]any{"op": "create", "branch": "db:dev", "token": tok, "incarnation": tok,
		"at": time.Now().Add(-2 * time.Minute).UnixMilli(), "delta": 1}}
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mainPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	flureePublishCommit(t, filepath.Join(dir, "ns@v2", "db", "dev.json"), "bafyc2", 2)
	if _, err := ns.CreateBranch(ctx, "db:feat", nameservice.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, err := ns.Lookup(ctx, "db:main")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Branches != 2 {
		t.Errorf("db:main counts %d branches after db:dev and db:feat were created; want 2", rec.Branches)
	}
}
