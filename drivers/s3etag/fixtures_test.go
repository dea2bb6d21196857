package s3etag_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/fixturetest"
)

// fixtures are the ns@v2 fixture cases.
var fixtures = fixturetest.NSv2()

// TestFixtures uploads every fixture case to a prefix of one bucket and
// checks the driver lists and gets exactly what expected.json says, and
// exactly what the filesystem driver reads from the same files.
func TestFixtures(t *testing.T) {
	endpoint, bucket := newBucket(t)
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
			cfg := baseConfig(endpoint, bucket, driver.LayoutB)
			cfg.Prefix = c.Name()
			d, err := s3etag.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			upload(t, d.Client(), bucket, c.Name(), dir)
			got := fixturetest.ListAll(t, d, driver.ListOptions{IncludeRetracted: true})
			want := fixturetest.ReadExpected(t, filepath.Join(dir, "expected.json"))
			if diff := cmp.Diff(want, got, fixturetest.RecordCmp...); diff != "" {
				t.Errorf("records differ from expected.json (-want +got):\n%s", diff)
			}
			fsd, err := nsfs.Open(context.Background(), nsfs.Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			fromFS := fixturetest.ListAll(t, fsd, driver.ListOptions{IncludeRetracted: true})
			if diff := cmp.Diff(fromFS, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b driver.Object) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("records differ from the filesystem driver's (-fs +s3):\n%s", diff)
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

// upload copies dir's ns@v2 tree to bucket under prefix.
func upload(t *testing.T, client *s3.Client, bucket, prefix, dir string) {
	t.Helper()
	root := filepath.Join(dir, "ns@v2")
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		key := path.Join(prefix, filepath.ToSlash(rel))
		_, err = client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(b)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
