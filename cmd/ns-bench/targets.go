package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/jsonld"
)

// target is one backend to measure.
type target struct {
	name string
	// open opens a new independent client.
	open func(ctx context.Context) (driver.Driver, error)
	// requests counts the HTTP requests of every client; nil when the
	// backend speaks no HTTP.
	requests *counter
	// baseline names the raw operation; raw returns one call of it, writing
	// what one push of the driver wrote (its file's bytes) once per call.
	baseline string
	raw      func(ctx context.Context) (func(ctx context.Context, i int) error, error)
	close    func()
}

// counter is an http.RoundTripper that counts the requests it sends.
type counter struct {
	next http.RoundTripper
	n    atomic.Int64
}

// newCounter returns a counter and an HTTP client that sends through it.
func newCounter() (*counter, *http.Client) {
	c := &counter{next: http.DefaultTransport.(*http.Transport).Clone()}
	return c, &http.Client{Transport: c, Timeout: 10 * time.Second}
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// fsTarget sets up the filesystem driver of layout l in a new temporary
// directory; headFile names the file where that layout keeps a head.
func fsTarget(l jsonld.Layout, name, headFile string) func(context.Context, string) (*target, error) {
	return func(context.Context, string) (*target, error) {
		dir, err := os.MkdirTemp("", "ns-bench-")
		if err != nil {
			return nil, err
		}
		cfg := fs.Config{Dir: dir, Layout: l}
		file := filepath.Join(dir, "ns@v2", "bench", "push", headFile)
		return &target{
			name:     name,
			open:     func(ctx context.Context) (driver.Driver, error) { return fs.Open(ctx, cfg) },
			baseline: "write + fsync + rename + dir fsync",
			raw:      func(context.Context) (func(context.Context, int) error, error) { return rawFile(dir, file) },
			close:    func() { _ = os.RemoveAll(dir) },
		}, nil
	}
}

// rawFile returns the raw baseline of the filesystem: write a temporary
// file (holding what the driver wrote to file), fsync it, rename it over
// the target and fsync the directory.
func rawFile(dir, file string) (func(context.Context, int) error, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the driver's file: %w", err)
	}
	raw := filepath.Join(dir, "raw")
	if err := os.MkdirAll(raw, 0o755); err != nil {
		return nil, err
	}
	return func(_ context.Context, i int) error {
		tmp := filepath.Join(raw, "main.json.tmp"+strconv.Itoa(i))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(raw, "main.json")); err != nil {
			return err
		}
		d, err := os.Open(raw)
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	}, nil
}

// dynamoTarget measures the DynamoDB driver on a new table of endpoint,
// deleted at the end.
func dynamoTarget(ctx context.Context, endpoint string) (*target, error) {
	cnt, hc := newCounter()
	cfg := dynamodb.Config{Table: "ns-bench-" + driverutil.Token(), Region: "us-east-1", Endpoint: endpoint,
		HTTPClient: hc}
	d, err := dynamodb.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := nameservice.New(d).Provision(ctx); err != nil {
		return nil, err
	}
	client := d.Client()
	return &target{
		name:     "dynamodb",
		open:     func(ctx context.Context) (driver.Driver, error) { return dynamodb.Open(ctx, cfg) },
		requests: cnt,
		baseline: "conditional UpdateItem",
		raw: func(context.Context) (func(context.Context, int) error, error) {
			return func(ctx context.Context, i int) error { return rawUpdateItem(ctx, client, cfg.Table, i) }, nil
		},
		close: func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = client.DeleteTable(ctx, &awsdynamodb.DeleteTableInput{TableName: aws.String(cfg.Table)})
		},
	}, nil
}

// rawUpdateItem is what a push does with the plain SDK: one conditional
// UpdateItem of a head item, commit_t rising.
func rawUpdateItem(ctx context.Context, c *awsdynamodb.Client, table string, i int) error {
	t := strconv.Itoa(i + 1)
	_, err := c.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
		TableName: aws.String(table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "raw/baseline:main"},
			"sk": &types.AttributeValueMemberS{Value: "head"},
		},
		UpdateExpression:    aws.String("SET commit_t = :t, commit_address = :a, updated_at_ms = :u"),
		ConditionExpression: aws.String("attribute_not_exists(commit_t) OR commit_t < :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":t": &types.AttributeValueMemberN{Value: t},
			":a": &types.AttributeValueMemberS{Value: "fluree:bench/commit/" + t},
			":u": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().UnixMilli(), 10)},
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	return err
}

// s3Target measures the S3 driver (layout B) on a new bucket of endpoint,
// removed at the end.
func s3Target(ctx context.Context, endpoint string) (*target, error) {
	cnt, hc := newCounter()
	cfg := s3etag.Config{Bucket: "ns-bench-" + driverutil.Token(), Region: "us-east-1", Endpoint: endpoint,
		PathStyle: true, Layout: jsonld.LayoutB, HTTPClient: hc}
	client, err := s3etag.NewClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(cfg.Bucket)}); err != nil {
		return nil, fmt.Errorf("create bucket: %w", err)
	}
	return &target{
		name:     "s3etag (layout B)",
		open:     func(ctx context.Context) (driver.Driver, error) { return s3etag.Open(ctx, cfg) },
		requests: cnt,
		baseline: "PutObject with If-Match",
		raw: func(ctx context.Context) (func(context.Context, int) error, error) {
			return rawPut(ctx, client, cfg.Bucket)
		},
		close: func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			awsconf.RemoveBucket(ctx, client, cfg.Bucket)
		},
	}, nil
}

// rawPut returns the raw baseline of S3: a PutObject of what the driver
// wrote, with If-Match on the ETag of the previous one, as the driver's
// uncontended push.
func rawPut(ctx context.Context, c *s3.Client, bucket string) (func(context.Context, int) error, error) {
	obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("ns@v2/bench/push/main.json")})
	if err != nil {
		return nil, fmt.Errorf("read the driver's file: %w", err)
	}
	data, err := io.ReadAll(obj.Body)
	obj.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the driver's file: %w", err)
	}
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("raw/main.json"),
		Body: bytes.NewReader(data), IfNoneMatch: aws.String("*")})
	if err != nil {
		return nil, err
	}
	etag := aws.ToString(out.ETag)
	return func(ctx context.Context, _ int) error {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("raw/main.json"),
			Body: bytes.NewReader(data), IfMatch: aws.String(etag), ContentType: aws.String("application/json")})
		if err == nil {
			etag = aws.ToString(out.ETag)
		}
		return err
	}, nil
}
