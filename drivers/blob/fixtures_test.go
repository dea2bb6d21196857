package blob_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	gblob "gocloud.dev/blob"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/fixturetest"
)

// fixtures are the ns@v2 fixture cases.
var fixtures = fixturetest.NSv2()

func TestFixturesGCS(t *testing.T)   { testFixtures(t, gcsServer(t)) }
func TestFixturesAzure(t *testing.T) { testFixtures(t, azureServer(t)) }

// testFixtures uploads every fixture case to a prefix of one bucket and
// checks the driver lists and gets exactly what expected.json says.
func testFixtures(t *testing.T, s *server) {
	bucket := s.newBucket(t)
	cases, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		n++
		t.Run(c.Name(), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(fixtures, c.Name())
			d := openDriver(t, s, bucket, blob.Config{Prefix: c.Name(), Layout: driver.LayoutB}, nil)
			upload(t, d.Bucket(), c.Name(), dir)
			got := fixturetest.ListAll(t, d, driver.ListOptions{IncludeRetracted: true})
			want := fixturetest.ReadExpected(t, filepath.Join(dir, "expected.json"))
			if diff := cmp.Diff(want, got, fixturetest.RecordCmp...); diff != "" {
				t.Errorf("records differ from expected.json (-want +got):\n%s", diff)
			}
			for _, w := range want {
				r, err := d.Get(ctx, w.ID)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(w, r, fixturetest.RecordCmp...); diff != "" {
					t.Errorf("Get %s (-want +got):\n%s", w.ID, diff)
				}
			}
		})
	}
	if n < 7 {
		t.Fatalf("%d fixture cases, want at least 7", n)
	}
}

// upload copies dir's ns@v2 tree to the bucket under prefix.
func upload(t *testing.T, b *gblob.Bucket, prefix, dir string) {
	t.Helper()
	root := filepath.Join(dir, "ns@v2")
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		key := path.Join(prefix, filepath.ToSlash(rel))
		return b.Upload(context.Background(), key, bytes.NewReader(data), &gblob.WriterOptions{ContentType: "application/json"})
	})
	if err != nil {
		t.Fatal(err)
	}
}
