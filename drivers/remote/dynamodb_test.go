package remote_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

var (
	tableOnce sync.Once
	tableCfg  dynamodb.Config
	tableErr  error
)

// dynamoConfig returns the configuration of a table on DynamoDB Local that
// the tests of this package share (each conformance test has its own ID
// prefix); it is deleted when the package's tests end.
func dynamoConfig(t *testing.T) dynamodb.Config {
	t.Helper()
	endpoint := testenv.DynamoDBEndpoint(t)
	tableOnce.Do(func() {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		tableCfg = dynamodb.Config{Table: "ns-remote-" + hex.EncodeToString(b), Region: "us-east-1", Endpoint: endpoint,
			Credentials: testenv.Credentials}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		d, err := dynamodb.Open(ctx, tableCfg)
		if err == nil {
			err = d.Provision(ctx)
			_ = d.Close()
		}
		tableErr = err
	})
	if tableErr != nil {
		t.Fatalf("create test table: %v", tableErr)
	}
	return tableCfg
}

func deleteTable(cfg dynamodb.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := dynamodb.Open(ctx, cfg)
	if err != nil {
		return
	}
	defer d.Close()
	_, _ = d.Client().DeleteTable(ctx, &awsdynamodb.DeleteTableInput{TableName: aws.String(cfg.Table)})
}

func TestMain(m *testing.M) {
	if url := os.Getenv(bareEnv); url != "" {
		fmt.Fprintln(os.Stderr, "bare floor:", bareServe(url))
		os.Exit(1)
	}
	code := m.Run()
	if tableCfg.Table != "" {
		deleteTable(tableCfg)
	}
	os.Exit(code)
}

func TestConformanceDynamoDB(t *testing.T) {
	t.Parallel()
	conformance.Run(t, harness(func(t *testing.T) (driver.Driver, conformance.CorruptFunc) {
		cfg := dynamoConfig(t)
		d, err := dynamodb.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d, func(ctx context.Context, id model.ID) error {
			return testenv.CorruptDynamoDB(ctx, d.Client(), cfg.Table, id)
		}
	}))
}
