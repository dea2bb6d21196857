package dynamodb_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// One table serves the whole test run; the conformance suite isolates its
// tests by ID prefix, and the other tests use IDs of their own.
var (
	tableOnce sync.Once
	tableName string
	tableErr  error
	tableCfg  dynamodb.Config
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tableName != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if c, err := dynamodb.NewClient(ctx, tableCfg); err == nil {
			_, _ = c.DeleteTable(ctx, deleteTableInput(tableName))
		}
		cancel()
	}
	os.Exit(code)
}

// testConfig returns a Config for the test server (skipping the test when
// there is none, outside CI), on the shared table, created once.
func testConfig(t testing.TB) dynamodb.Config {
	t.Helper()
	endpoint := testenv.DynamoDBEndpoint(t)
	tableOnce.Do(func() {
		tableCfg = dynamodb.Config{
			Table:       "ns-test-" + testenv.RandomHex(4),
			Region:      "us-east-1",
			Endpoint:    endpoint,
			Credentials: testenv.Credentials,
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// Load the shared AWS configuration once: every Opener call then
		// builds only a new client.
		awsCfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(tableCfg.Region), config.WithCredentialsProvider(tableCfg.Credentials))
		if err != nil {
			tableErr = err
			return
		}
		tableCfg.AWSConfig = &awsCfg
		d, err := dynamodb.Open(ctx, tableCfg)
		if err == nil {
			err = d.Provision(ctx)
			_ = d.Close()
		}
		tableName, tableErr = tableCfg.Table, err
	})
	if tableErr != nil {
		t.Fatalf("create test table: %v", tableErr)
	}
	return tableCfg
}

func TestConformance(t *testing.T) {
	t.Parallel()
	conformance.Run(t, conformance.CorruptibleHarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		cfg := testConfig(t)
		open := func(ctx context.Context) (driver.Driver, error) { return dynamodb.Open(ctx, cfg) }
		return open, func(ctx context.Context, id model.ID) error { return corrupt(ctx, cfg, id) }, nil
	}))
}

// corrupt makes the meta item of id undecodable: its retracted attribute
// becomes a string.
func corrupt(ctx context.Context, cfg dynamodb.Config, id model.ID) error {
	c, err := dynamodb.NewClient(ctx, cfg)
	if err != nil {
		return err
	}
	return testenv.CorruptDynamoDB(ctx, c, cfg.Table, id)
}

func deleteTableInput(name string) *awsdynamodb.DeleteTableInput {
	return &awsdynamodb.DeleteTableInput{TableName: &name}
}
