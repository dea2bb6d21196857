package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

func testStore(t *testing.T) (store, string) {
	t.Helper()
	dir := t.TempDir()
	d, err := Open(context.Background(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return store{d}, dir
}

// TestStorePrimitives: the objstore.Store contract on files: create never
// replaces, a tag write needs the tag it read, a missing file is
// ErrMissing, and each write changes the tag.
func TestStorePrimitives(t *testing.T) {
	ctx := context.Background()
	s, dir := testStore(t)
	key := "ns@v2/db/main.json"
	path := filepath.Join(dir, "ns@v2", "db", "main.json")
	if data, tag, err := s.Get(ctx, key); data != nil || tag != "" || err != nil {
		t.Fatalf("get of nothing = %q, %q, %v", data, tag, err)
	}
	if _, err := s.Put(ctx, key, []byte("x"), objstore.IfMatch("1-2-3")); !errors.Is(err, objstore.ErrMissing) {
		t.Fatalf("tag write of a missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatalf("a failed tag write made its directory: %v", err)
	}
	t1, err := s.Put(ctx, key, []byte("one"), objstore.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, key, []byte("two"), objstore.IfAbsent()); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("second create: %v", err)
	}
	data, tag, err := s.Get(ctx, key)
	if string(data) != "one" || tag != t1 || err != nil {
		t.Fatalf("get = %q, %q, %v; want one at %q", data, tag, err, t1)
	}
	t2, err := s.Put(ctx, key, []byte("two"), objstore.IfMatch(t1))
	if err != nil || t2 == t1 {
		t.Fatalf("tag write = %q, %v (old tag %q)", t2, err, t1)
	}
	if _, err := s.Put(ctx, key, []byte("three"), objstore.IfMatch(t1)); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("write at a stale tag: %v", err)
	}
	if err := s.Delete(ctx, key, objstore.IfMatch(t1)); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("delete at a stale tag: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("file holds %q after refused writes", b)
	}
	if err := s.Delete(ctx, key, objstore.IfMatch(t2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, key, objstore.IfMatch(t2)); !errors.Is(err, objstore.ErrMissing) {
		t.Fatalf("delete of a missing file at a tag: %v", err)
	}
	if err := s.Delete(ctx, key, objstore.Precondition{}); err != nil {
		t.Fatalf("unconditional delete of a missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ns@v2", "db")); !os.IsNotExist(err) {
		t.Fatalf("the emptied directory (lock file included) is still there: %v", err)
	}
}

// TestStoreEmptyFileIsAbsent: a zero-length file (a create that crashed)
// reads as absent and a create replaces it.
func TestStoreEmptyFileIsAbsent(t *testing.T) {
	ctx := context.Background()
	s, dir := testStore(t)
	path := filepath.Join(dir, "ns@v2", "db", "main.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _, err := s.Get(ctx, "ns@v2/db/main.json"); data != nil || err != nil {
		t.Fatalf("get = %q, %v", data, err)
	}
	if tag, err := s.Head(ctx, "ns@v2/db/main.json"); tag != "" || err != nil {
		t.Fatalf("head = %q, %v", tag, err)
	}
	if _, err := s.Put(ctx, "ns@v2/db/main.json", []byte("x"), objstore.IfAbsent()); err != nil {
		t.Fatalf("create over an empty file: %v", err)
	}
}

// TestStoreTags: Head's tag is the stat part of the tag a read gives; a
// tag read within the racy window carries a content hash, so the same stat
// with other bytes does not match it. The listing gives keys without tags
// (List reads every file) and leaves lock files out.
func TestStoreTags(t *testing.T) {
	ctx := context.Background()
	s, dir := testStore(t)
	key := "ns@v2/db/main.json"
	tag, err := s.Put(ctx, key, []byte("one"), objstore.IfAbsent())
	if err != nil {
		t.Fatal(err)
	}
	st, sum, hashed := strings.Cut(tag, "+")
	if !hashed || sum == "" {
		t.Fatalf("tag of a file just written %q has no content part", tag)
	}
	if _, got, err := s.Get(ctx, key); got != tag || err != nil {
		t.Fatalf("get's tag %q, %v; want the write's %q", got, err, tag)
	}
	var listed []string
	err = s.List(ctx, "ns@v2/", "", func(e objstore.Entry) error {
		listed = append(listed, e.Key+" "+e.Tag)
		return nil
	})
	if err != nil || !slices.Equal(listed, []string{key + " "}) {
		t.Fatalf("list = %q, %v; want the key alone (no lock file)", listed, err)
	}
	if h, err := s.Head(ctx, key); h != st || err != nil {
		t.Fatalf("head = %q, %v; want %q", h, err, st)
	}
	fi, err := os.Lstat(filepath.Join(dir, "ns@v2", "db", "main.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !tagMatches(tag, fi, []byte("one")) || tagMatches(tag, fi, []byte("two")) {
		t.Fatal("the content part decides between files of one stat")
	}
	if !tagMatches(st, fi, []byte("two")) {
		t.Fatal("a tag without a content part is the stat alone")
	}
}

// TestStoreEscapedKeys: a key ending like a lock or temp file is stored
// apart from the lock files (with '~'), and listed under its own key.
func TestStoreEscapedKeys(t *testing.T) {
	ctx := context.Background()
	s, dir := testStore(t)
	for _, k := range []string{"ns@v2/db/main.json", "ns@v2/db/main.json.lock", "ns@v2/db/x.tmp"} {
		if _, err := s.Put(ctx, k, []byte(k), objstore.IfAbsent()); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ns@v2", "db", "main.json.lock~")); string(b) != "ns@v2/db/main.json.lock" {
		t.Fatalf("escaped file = %q, %v", b, err)
	}
	var keys []string
	if err := s.List(ctx, "ns@v2/", "", func(e objstore.Entry) error { keys = append(keys, e.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ns@v2/db/main.json", "ns@v2/db/main.json.lock", "ns@v2/db/x.tmp"}; !slices.Equal(keys, want) {
		t.Fatalf("list = %q, want %q", keys, want)
	}
	if data, _, err := s.Get(ctx, "ns@v2/db/main.json.lock"); string(data) != "ns@v2/db/main.json.lock" || err != nil {
		t.Fatalf("get = %q, %v", data, err)
	}
}

// TestStoreRefusesLinks: every primitive refuses a symbolic link below
// the root, naming it, and writes nothing through it.
func TestStoreRefusesLinks(t *testing.T) {
	ctx := context.Background()
	s, dir := testStore(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ns@v2"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "ns@v2", "db")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	key := "ns@v2/db/main.json"
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, model.ErrInternal) || !strings.Contains(err.Error(), link) {
			t.Errorf("%s: %v, want ErrInternal naming %s", what, err, link)
		}
	}
	_, _, err := s.Get(ctx, key)
	check("get", err)
	_, err = s.Head(ctx, key)
	check("head", err)
	_, err = s.Put(ctx, key, []byte("x"), objstore.IfAbsent())
	check("create", err)
	_, err = s.Put(ctx, key, []byte("x"), objstore.Precondition{})
	check("put", err)
	check("delete", s.Delete(ctx, key, objstore.Precondition{}))
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the root: %v", ents)
	}
	err = s.List(ctx, "ns@v2/", "", func(e objstore.Entry) error {
		if e.Key != "ns@v2/db" || e.Err == nil {
			t.Errorf("entry %+v, want the link with an error", e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
