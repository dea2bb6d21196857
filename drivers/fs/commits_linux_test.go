package fs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// bytesRead is what this process has read from files so far (rchar of
// /proc/self/io).
func bytesRead(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}

// writeCommitIndex writes Fluree's commit index of lines entries beside the
// record of mydb:main, as Fluree's append_commit_index_entry writes each
// line (fluree-db-nameservice src/file.rs), and returns its path and size.
func writeCommitIndex(t *testing.T, dir string, lines int) (string, int) {
	t.Helper()
	var b bytes.Buffer
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "{\"t\":%d,\"cid\":\"%s\"}\n", i, testenv.CID(strconv.Itoa(i)))
	}
	path := filepath.Join(dir, "ns@v2", "mydb", "main.commits.jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b.Len()
}

// TestCommitIndexFile puts Fluree's commit index of 10,000 lines beside a
// ledger, in both layouts: a lookup and a listing read none of it (what the
// process reads from files stays under a tenth of its size), a purge
// removes it, and Collect with no age limit (ns gc --older-than 0s) removes
// one Fluree wrote after the purge, leaving no file at all.
func TestCommitIndexFile(t *testing.T) {
	ctx := context.Background()
	for name, opts := range layouts {
		dir := t.TempDir()
		d := open(t, dir, opts)
		mustCreate(t, d, "mydb:main")
		path, size := writeCommitIndex(t, dir, 10_000)

		before := bytesRead(t)
		rec, err := d.Get(ctx, pid("mydb:main"))
		if err != nil || rec.ID.String() != "mydb:main" {
			t.Fatalf("%s: lookup: %v, %v", name, rec, err)
		}
		page, err := d.List(ctx, driver.ListOptions{Prefix: "mydb"})
		if err != nil || len(page.Records) != 1 || len(page.Failed) != 0 {
			t.Fatalf("%s: listing: %+v, %v", name, page, err)
		}
		if read := bytesRead(t) - before; read > int64(size/10) {
			t.Errorf("%s: a lookup and a listing read %d bytes beside a commit index of %d", name, read, size)
		}

		if err := d.Delete(ctx, pid("mydb:main")); err != nil {
			t.Fatalf("%s: purge: %v", name, err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s: the commit index outlived the purge (%v)", name, err)
		}
		writeCommitIndex(t, dir, 3) // Fluree appending to the ledger while it was purged
		st, err := d.Collect(ctx, driver.CollectOptions{})
		if err != nil {
			t.Fatalf("%s: collect: %v", name, err)
		}
		if left := files(t, dir); len(left) != 0 || st.Kept != 0 {
			t.Errorf("%s: collect %+v left %v, want nothing", name, st, left)
		}
	}
}

// TestCommitIndexFileKept: Collect keeps the commit index of a live record,
// and one written less than OlderThan ago; a drop of a branch removes the
// branch's.
func TestCommitIndexFileKept(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ns := nameservice.New(open(t, dir, layouts["B"]))
	if err := ns.Init(ctx, "mydb"); err != nil {
		t.Fatal(err)
	}
	path, _ := writeCommitIndex(t, dir, 3)
	var removed []string
	report := func(c nameservice.Collected) {
		if c.Removed {
			removed = append(removed, c.Object)
		}
	}
	_, err := ns.Collect(ctx, nameservice.CollectOptions{Report: report})
	if _, serr := os.Stat(path); err != nil || serr != nil {
		t.Fatalf("collect beside a live record: %v; removed %v; the index: %v", err, removed, serr)
	}
	if err := ns.Purge(ctx, "mydb"); err != nil {
		t.Fatal(err)
	}
	writeCommitIndex(t, dir, 3)
	st, err := ns.Collect(ctx, nameservice.CollectOptions{OlderThan: time.Hour})
	if _, serr := os.Stat(path); err != nil || serr != nil || st.Kept == 0 {
		t.Fatalf("collect with OlderThan 1h: %+v, %v; the index: %v, want it kept", st, err, serr)
	}

	if err := ns.Init(ctx, "mydb"); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.PublishCommit(ctx, "mydb", 1, testenv.CID("c1")); err != nil {
		t.Fatal(err)
	}
	if _, err := ns.CreateBranch(ctx, "mydb:dev", nameservice.BranchOptions{}); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(dir, "ns@v2", "mydb", "dev.commits.jsonl")
	if err := os.WriteFile(dev, []byte("{\"t\":1,\"cid\":\""+testenv.CID("c1")+"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ns.DropBranch(ctx, "mydb:dev"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dev); !os.IsNotExist(err) {
		t.Errorf("the branch's commit index outlived its drop (%v)", err)
	}
}

// TestCommitIndexFileLines: a content-ID head published here appends the
// line Fluree's append_commit_index_entry appends ({"t":T,"cid":"C"} and a
// newline), an address that is no content ID none; pending reads Fluree's
// lines and ours alike, each (t, cid) once; a torn last line makes the
// index unusable (ok false), as in Fluree; a prune keeps the lines above
// its t.
func TestCommitIndexFileLines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ns := nameservice.New(open(t, dir, layouts["B"]))
	if err := ns.Init(ctx, "mydb"); err != nil {
		t.Fatal(err)
	}
	c1, c2, c3 := testenv.CID("1"), testenv.CID("2"), testenv.CID("3")
	for _, p := range []struct {
		t    int64
		addr string
	}{{1, c1}, {2, "fluree:file://mydb/commit/2.json"}, {3, c3}} {
		if _, err := ns.PublishCommit(ctx, "mydb", p.t, p.addr); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "ns@v2", "mydb", "main.commits.jsonl")
	wantFile := func(want string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil || string(b) != want {
			t.Fatalf("commit index:\n%s(%v)\nwant\n%s", b, err, want)
		}
	}
	line := func(t int64, c string) string { return fmt.Sprintf("{\"t\":%d,\"cid\":\"%s\"}\n", t, c) }
	wantFile(line(1, c1) + line(3, c3))

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(line(2, c2) + line(3, c3)) // Fluree's lines: one new, one again
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := ns.PendingCommitCIDs(ctx, "mydb", 1)
	if want := []nameservice.CommitEntry{{T: 2, CID: c2}, {T: 3, CID: c3}}; err != nil || !ok || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pending above 1: %v (ok %v, %v), want %v", got, ok, err, want)
	}
	if err := ns.PruneCommitIndex(ctx, "mydb", 2); err != nil {
		t.Fatal(err)
	}
	wantFile(line(3, c3) + line(3, c3))
	if err := os.WriteFile(path, []byte(line(3, c3)+`{"t":4,"ci`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := ns.PendingCommitCIDs(ctx, "mydb", 0); err != nil || ok || got != nil {
		t.Fatalf("pending beside a torn line: %v (ok %v, %v), want no usable index", got, ok, err)
	}
}
