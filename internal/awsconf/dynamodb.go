package awsconf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/internal/driverutil"
)

// LocalDynamoDB reports whether the DynamoDB endpoint is not AWS's own:
// endpoint is set, or AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL is.
// DynamoDB Local and LocalStack answer errors without the CRC32 header, and
// checking it would log a warning and drop the connection on every error.
func LocalDynamoDB(endpoint string) bool {
	return endpoint != "" || os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
}

// DynamoDBOptions returns the client options every DynamoDB client of the
// module shares: endpoint (when set), the response CRC32 check off for a
// local endpoint (see LocalDynamoDB), httpClient and retryer.
func DynamoDBOptions(endpoint string, httpClient dynamodb.HTTPClient, retryer aws.Retryer) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		if LocalDynamoDB(endpoint) {
			o.DisableValidateResponseChecksum = true
		}
		o.HTTPClient, o.Retryer = httpClient, retryer
	}
}

// How EnsureTable waits for a table: DescribeTable every TablePoll, for at
// most TableWait unless ctx ends sooner.
const (
	TablePoll = 500 * time.Millisecond
	TableWait = 2 * time.Minute
)

// ErrTableNotActive is wrapped by EnsureTable's error when the table did not
// become ACTIVE within TableWait.
var ErrTableNotActive = errors.New("table not ACTIVE")

// EnsureTable creates the table of in unless it exists, then polls
// DescribeTable until the table and its global secondary indexes are
// ACTIVE. check, when not nil, vets each description; its error ends the
// wait. It reports whether this call created the table. Its errors are the
// SDK's (classify them with Code) or check's. It needs dynamodb:CreateTable
// and dynamodb:DescribeTable.
func EnsureTable(ctx context.Context, client *dynamodb.Client, in *dynamodb.CreateTableInput, check func(*types.TableDescription) error) (created bool, err error) {
	_, err = client.CreateTable(ctx, in)
	if _, inUse := errors.AsType[*types.ResourceInUseException](err); err != nil && !inUse {
		return false, err
	}
	created = err == nil
	deadline := time.Now().Add(TableWait)
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName})
		if err != nil {
			return created, err
		}
		if check != nil {
			if err := check(out.Table); err != nil {
				return created, err
			}
		}
		pending := func(g types.GlobalSecondaryIndexDescription) bool {
			return g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive
		}
		if out.Table.TableStatus == types.TableStatusActive && !slices.ContainsFunc(out.Table.GlobalSecondaryIndexes, pending) {
			return created, nil
		}
		if time.Now().After(deadline) {
			return created, fmt.Errorf("%w after %s (status %s)", ErrTableNotActive, TableWait, out.Table.TableStatus)
		}
		if err := driverutil.Sleep(ctx, TablePoll); err != nil {
			return created, err
		}
	}
}

// KeySchema returns the key schema and attribute definitions of a table or
// index keyed by string attributes hash (HASH) and rng (RANGE).
func KeySchema(hash, rng string) ([]types.KeySchemaElement, []types.AttributeDefinition) {
	s := types.ScalarAttributeTypeS
	return []types.KeySchemaElement{
			{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange},
		}, []types.AttributeDefinition{
			{AttributeName: aws.String(hash), AttributeType: s},
			{AttributeName: aws.String(rng), AttributeType: s},
		}
}
