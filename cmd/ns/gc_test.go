package main

import (
	"context"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// leftovers lists what the store at storeURL holds for IDs under prefix,
// read with the backend's own API (not through a driver): every file,
// object or item, records, marks, tombstones and lock files alike. ok is
// false for a scheme it cannot read this way.
func leftovers(t *testing.T, storeURL, prefix string) (left []string, ok bool) {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	switch u.Scheme {
	case "file":
		return fileLeftovers(t, u, prefix), true
	case "s3":
		return s3Leftovers(t, u, prefix), true
	case "dynamodb":
		return dynamoLeftovers(t, u, prefix), true
	case "docstore+dynamodb":
		return docstoreLeftovers(t, u, prefix), true
	}
	return nil, false
}

func fileLeftovers(t *testing.T, u *url.URL, prefix string) []string {
	t.Helper()
	root := filepath.FromSlash(u.Path)
	keyPrefix := objstore.IDKeyPrefix(prefix)
	var left []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if key, _ := filepath.Rel(root, p); strings.HasPrefix(filepath.ToSlash(key), keyPrefix) {
			left = append(left, key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}

func s3Leftovers(t *testing.T, u *url.URL, prefix string) []string {
	t.Helper()
	cfg, err := s3etag.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	client, err := s3etag.NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	keyPrefix := objstore.IDKeyPrefix(prefix)
	if p := strings.Trim(cfg.Prefix, "/"); p != "" {
		keyPrefix = p + "/" + keyPrefix
	}
	var left []string
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: &cfg.Bucket, Prefix: &keyPrefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			left = append(left, aws.ToString(o.Key))
		}
	}
	return left
}

func dynamoLeftovers(t *testing.T, u *url.URL, prefix string) []string {
	t.Helper()
	cfg, err := dynamodb.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	client, err := dynamodb.NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	pages := awsdynamodb.NewScanPaginator(client, &awsdynamodb.ScanInput{
		TableName:                 &cfg.Table,
		ConsistentRead:            aws.Bool(true),
		FilterExpression:          aws.String("begins_with(pk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: prefix}},
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			pk, _ := it["pk"].(*types.AttributeValueMemberS)
			sk, _ := it["sk"].(*types.AttributeValueMemberS)
			if pk != nil && sk != nil {
				left = append(left, pk.Value+" "+sk.Value)
			}
		}
	}
	return left
}

// docstoreLeftovers lists the documents of a docstore+dynamodb table, one
// per file, by their layout key.
func docstoreLeftovers(t *testing.T, u *url.URL, prefix string) []string {
	t.Helper()
	client := awsdynamodb.New(awsdynamodb.Options{Region: "us-east-1", Credentials: testenv.Credentials,
		BaseEndpoint: aws.String(u.Query().Get("endpoint")), DisableValidateResponseChecksum: true})
	var left []string
	pages := awsdynamodb.NewScanPaginator(client, &awsdynamodb.ScanInput{
		TableName:                 aws.String(u.Host),
		ConsistentRead:            aws.Bool(true),
		FilterExpression:          aws.String("begins_with(#k, :p)"),
		ExpressionAttributeNames:  map[string]string{"#k": "key"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: objstore.IDKeyPrefix(prefix)}},
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if k, ok := it["key"].(*types.AttributeValueMemberS); ok {
				left = append(left, k.Value)
			}
		}
	}
	slices.Sort(left)
	return left
}

// gcStores are the stores TestGC runs on, each new and empty.
func gcStores(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"file": func(t *testing.T) string { return "file://" + filepath.ToSlash(t.TempDir()) },
		"s3": func(t *testing.T) string {
			endpoint := testenv.S3Endpoint(t)
			return "s3://" + s3Bucket(t, endpoint) + "/ns?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
		},
		"dynamodb": func(t *testing.T) string {
			u := "dynamodb://ns-gc-" + randomHex(4) + "?region=us-east-1&endpoint=" + url.QueryEscape(testenv.DynamoDBEndpoint(t))
			(&cli{t: t, url: u}).want(exitOK, "table", "create")
			return u
		},
		"docstore+dynamodb": func(t *testing.T) string {
			u := "docstore+dynamodb://ns-gc-doc-" + randomHex(4) + "?region=us-east-1&endpoint=" + url.QueryEscape(testenv.DynamoDBEndpoint(t))
			(&cli{t: t, url: u}).want(exitOK, "table", "create")
			return u
		},
	}
}

// keptYoung is the line ns gc prints for gc/gone's young purge, whatever
// its age in whole seconds.
var keptYoung = regexp.MustCompile(`(?m)^kept .*\(gc/gone:main\): purged [0-9hms]+ ago, younger than 24h0m0s$`)

// TestGC runs ns gc on what purges left (the commit index of the heads
// published included) beside a live record and a record created again
// after its purge: a young purge is kept, a dry run removes
// nothing, --older-than 0s removes every object of the purged ID, and the
// live and re-created records are untouched.
func TestGC(t *testing.T) {
	for name, store := range gcStores(t) {
		t.Run(name, func(t *testing.T) {
			c := &cli{t: t, url: store(t)}
			for _, id := range []string{"gc/live", "gc/gone", "gc/again"} {
				c.want(exitOK, "init", id)
				c.want(exitOK, "publish-commit", id, "2", testCID(id)) // a content ID: Fluree's commit index too
				c.want(exitOK, "publish-index", id, "1", "fluree:file://"+id+"/i1")
			}
			c.want(exitOK, "purge", "gc/gone")
			c.want(exitOK, "purge", "gc/again")
			c.want(exitOK, "init", "gc/again")
			live, again := c.want(exitOK, "lookup", "gc/live", "--json"), c.want(exitOK, "lookup", "gc/again", "--json")
			before, _ := leftovers(t, c.url, "gc/")

			out := c.want(exitOK, "gc", "--prefix", "gc/")
			if regexp.MustCompile(`(?m)^removed .*gc/gone:main`).MatchString(out) {
				t.Errorf("ns gc with the default --older-than removed a purge a moment old:\n%s", out)
			}
			// The age is the wall clock's: a loaded machine may print 1s or more.
			if name != "dynamodb" && !keptYoung.MatchString(out) {
				t.Errorf("ns gc does not say it kept the young purge:\n%s", out)
			}
			wantLeft(t, c.url, before, "after ns gc with the default --older-than")
			c.want(exitOK, "gc", "--prefix", "gc/", "--older-than", "0s", "--dry-run")
			wantLeft(t, c.url, before, "after a dry run")

			out = c.want(exitOK, "gc", "--prefix", "gc/", "--older-than", "0s")
			t.Logf("ns gc --older-than 0s:\n%s", out)
			after, _ := leftovers(t, c.url, "gc/")
			for _, o := range after {
				if strings.Contains(o, "gone") {
					t.Errorf("left of the purged gc/gone: %s", o)
				}
			}
			if name != "dynamodb" && len(withoutLocks(after)) >= len(withoutLocks(before)) {
				t.Errorf("ns gc removed nothing: %d objects before, %d after", len(before), len(after))
			}
			if got := c.want(exitOK, "lookup", "gc/live", "--json"); got != live {
				t.Errorf("the live record changed:\n%s\n%s", live, got)
			}
			if got := c.want(exitOK, "lookup", "gc/again", "--json"); got != again {
				t.Errorf("the re-created record changed:\n%s\n%s", again, got)
			}
			c.want(exitOK, "publish-commit", "gc/again", "1", "fluree:file://again/1")
			c.want(exitOK, "publish-index", "gc/again", "1", "fluree:file://again/i1")
		})
	}
}

// withoutLocks leaves out the lock files of the file store, which ns gc
// removes whenever no writer holds them.
func withoutLocks(objs []string) []string {
	var out []string
	for _, o := range objs {
		if !strings.HasSuffix(o, ".lock") {
			out = append(out, o)
		}
	}
	return out
}

// wantLeft checks that the store holds the objects of want under gc/, lock
// files aside.
func wantLeft(t *testing.T, storeURL string, want []string, when string) {
	t.Helper()
	got, _ := leftovers(t, storeURL, "gc/")
	if !slices.Equal(withoutLocks(got), withoutLocks(want)) {
		t.Errorf("%s the store holds %v, want %v", when, withoutLocks(got), withoutLocks(want))
	}
}
