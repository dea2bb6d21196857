package dynamodb_test

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// TestLostAnswers loses the answer of each write at a proxy in front of
// DynamoDB Local while another client purges (and creates again) the record.
func TestLostAnswers(t *testing.T) {
	conformance.RunLostAnswers(t, conformance.LossyHarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		cfg := testConfig(t)
		open := func(ctx context.Context) (driver.Driver, error) { return dynamodb.Open(ctx, cfg) }
		lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
			url, err := testenv.LossyProxy(t, cfg.Endpoint, lose)
			if err != nil {
				return nil, err
			}
			c := cfg
			c.Endpoint = url
			return dynamodb.Open(ctx, c)
		}
		return open, lossy, nil
	}))
}
