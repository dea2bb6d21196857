package docstore

import (
	"context"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// urlHarness opens every client of a store with Open(rawURL()), as a
// separate process would.
func urlHarness(rawURL func(t *testing.T) string) conformance.Harness {
	return conformance.CorruptibleHarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		u := rawURL(t)
		open := func(ctx context.Context) (driver.Driver, error) { return openURL(ctx, u) }
		return open, func(ctx context.Context, id model.ID) error { return corrupt(ctx, u, id) }, nil
	})
}

// corrupt replaces the defining file of id with text that is no JSON.
func corrupt(ctx context.Context, rawURL string, id model.ID) error {
	d, err := openURL(ctx, rawURL)
	if err != nil {
		return err
	}
	defer d.Close()
	files, err := layout.Files(jsonld.LayoutB, id)
	if err != nil {
		return err
	}
	return rawPut(ctx, d, files[0].Key, []byte("{not json"))
}

// memURL returns the URL of a memdocstore collection of the test's own.
// Every Open of it shares the one collection memdocstore's URL opener keeps
// per name.
func memURL(t *testing.T) string { return "docstore+mem://ns" + testenv.RandomHex(6) }

func TestConformanceMem(t *testing.T) {
	t.Parallel()
	conformance.Run(t, urlHarness(memURL))
}

// One DynamoDB table serves the whole run; the suite isolates its tests by
// ID prefix.
var (
	tableOnce sync.Once
	tableName string
	tableErr  error
	tableCli  *dynamodb.Client
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tableName != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = tableCli.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(tableName)})
		cancel()
	}
	os.Exit(code)
}

// dynamoURL returns the docstore+dynamodb URL of the run's table on
// DynamoDB Local, creating the table once (skipping the test when there is
// no server, outside CI).
func dynamoURL(t testing.TB) string {
	t.Helper()
	endpoint := testenv.DynamoDBEndpoint(t)
	tableOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
		if err != nil {
			tableErr = err
			return
		}
		tableCli = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
			o.BaseEndpoint = aws.String(endpoint)
			o.DisableValidateResponseChecksum = true
		})
		name := "nsdoc-test-" + testenv.RandomHex(4)
		if tableErr = provision(ctx, tableURL(name, endpoint)); tableErr == nil {
			tableName = name
		}
	})
	if tableErr != nil {
		t.Fatalf("create test table: %v", tableErr)
	}
	return tableURL(tableName, endpoint)
}

func tableURL(table, endpoint string) string {
	return "docstore+dynamodb://" + table + "?region=us-east-1&disable_response_crc32=true&endpoint=" + url.QueryEscape(endpoint)
}

// provision creates the table of a docstore+dynamodb URL with Provision.
func provision(ctx context.Context, rawURL string) error {
	d, err := openURL(ctx, rawURL)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Provision(ctx)
}

// openURL opens rawURL with ParseURL and Open, as drivers.Open does.
func openURL(ctx context.Context, rawURL string) (*Driver, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, cfg)
}

func TestConformanceDynamoDB(t *testing.T) {
	t.Parallel()
	conformance.Run(t, urlHarness(func(t *testing.T) string { return dynamoURL(t) }))
}
