package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
)

// source is a nameservice to migrate from, with a way to make one of its
// records unreadable.
type source struct {
	url     string
	corrupt func(t *testing.T, id string)
}

// TestUnreadableRecordsLoseNoNeighbour is issue 14's reproduction: records
// a1 a2 a3 b c1 c2 d e with b and d unreadable. The plan and the copy must
// account for all eight (six copied, two failed and named), whatever the
// page size: no record next to a bad one may be dropped silently.
func TestUnreadableRecordsLoseNoNeighbour(t *testing.T) {
	sources := map[string]func(t *testing.T) source{"fs": fsSource, "s3": s3Source, "dynamodb": dynamoSource}
	for name, mk := range sources {
		t.Run(name, func(t *testing.T) {
			for _, pageSize := range []string{"1", "2", "1000"} {
				t.Run("page-size="+pageSize, func(t *testing.T) { checkNoNeighbourLost(t, mk(t), pageSize) })
			}
		})
	}
}

func checkNoNeighbourLost(t *testing.T, src source, pageSize string) {
	ids := []string{"a1", "a2", "a3", "b", "c1", "c2", "d", "e"}
	bad := map[string]bool{"b:main": true, "d:main": true}
	ns := open(t, src.url)
	for _, id := range ids {
		must(t, ns.Init(context.Background(), id))
	}
	for id := range bad {
		src.corrupt(t, id)
	}
	var good []string
	for _, id := range ids {
		if id += ":main"; !bad[id] {
			good = append(good, id)
		}
	}

	plan := want(t, exitFail, "--from", src.url, "--to", memURL(t, "plan"), "--dry-run", "--page-size", pageSize)
	if !strings.Contains(plan.stdout, "create 6, skip 0, advance 0, conflict 0, failed 2") {
		t.Fatalf("dry run does not account for all eight records:\n%s", plan.stdout)
	}
	to := memURL(t, "dst")
	r := want(t, exitFail, "--from", src.url, "--to", to, "--page-size", pageSize, "--verify")
	for id := range bad {
		if !strings.Contains(r.stdout, "failed "+id+": source:") {
			t.Errorf("the copy does not name unreadable %s:\n%s", id, r.stdout)
		}
	}
	var copied []string
	for rec, err := range open(t, to).List(context.Background(), nameservice.ListOptions{IncludeRetracted: true}) {
		must(t, err)
		copied = append(copied, rec.ID.String())
	}
	if !slices.Equal(copied, good) {
		t.Fatalf("copied %v, want every readable record %v\n%s", copied, good, r.stdout)
	}
	if !strings.Contains(r.stdout, "verify: 8 records") || !strings.Contains(r.stdout, "same 6") {
		t.Fatalf("verify does not prove the six readable records arrived:\n%s", r.stdout)
	}
}

const junk = "{not json"

func fsSource(t *testing.T) source {
	dir := t.TempDir()
	return source{url: fileURL(dir), corrupt: func(t *testing.T, id string) {
		name, _, _ := strings.Cut(id, ":")
		must(t, os.WriteFile(filepath.Join(dir, "ns@v2", name, "main.json"), []byte(junk), 0o644))
	}}
}

func s3Source(t *testing.T) source {
	endpoint := testenv.S3Endpoint(t)
	ctx := context.Background()
	bucket := fmt.Sprintf("migrate-%d", storeSeq.Add(1)+int64(os.Getpid())*1000)
	cfg := s3etag.Config{Bucket: bucket, Region: "us-east-1", Endpoint: endpoint, PathStyle: true, Layout: jsonld.LayoutB}
	client, err := s3etag.NewClient(ctx, cfg)
	must(t, err)
	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	must(t, err)
	u := "s3://" + bucket + "?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	return source{url: u, corrupt: func(t *testing.T, id string) {
		name, _, _ := strings.Cut(id, ":")
		key := "ns@v2/" + name + "/main.json"
		_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: strings.NewReader(junk)})
		must(t, err)
	}}
}

func dynamoSource(t *testing.T) source {
	endpoint := testenv.DynamoDBEndpoint(t)
	ctx := context.Background()
	u := dynamoURL(t, endpoint)
	want(t, exitOK, "--from", memURL(t, "empty"), "--to", u, "--create-table")
	table := strings.TrimPrefix(u[:strings.Index(u, "?")], "dynamodb://")
	client, err := dynamodb.NewClient(ctx, dynamodb.Config{Table: table, Region: "us-east-1", Endpoint: endpoint})
	must(t, err)
	return source{url: u, corrupt: func(t *testing.T, id string) {
		_, err := client.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
			TableName: &table,
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: id},
				"sk": &types.AttributeValueMemberS{Value: "meta"},
			},
			UpdateExpression:          aws.String("SET retracted = :x"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: junk}},
		})
		must(t, err)
	}}
}
