package docstore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"nameservice.dev/nameservice/internal/awsconf"
)

// DynamoDBTableInput returns the CreateTable request for a table that
// docstore+dynamodb URLs can use: key pk (HASH) + sk (RANGE), strings,
// billed PAY_PER_REQUEST, no index. It is not the native dynamodb driver's
// table: keep the two apart.
func DynamoDBTableInput(table string) *dynamodb.CreateTableInput {
	keys, attrs := awsconf.KeySchema(fieldPK, fieldSK)
	return &dynamodb.CreateTableInput{TableName: aws.String(table), BillingMode: types.BillingModePayPerRequest,
		KeySchema: keys, AttributeDefinitions: attrs}
}

// EnsureDynamoDBTable creates the table of DynamoDBTableInput unless it
// exists, and waits until it is ACTIVE. gocloud's DynamoDB collection
// describes its table when it is opened, so call this first. It needs
// dynamodb:CreateTable and dynamodb:DescribeTable.
func EnsureDynamoDBTable(ctx context.Context, client *dynamodb.Client, table string) error {
	if _, err := awsconf.EnsureTable(ctx, client, DynamoDBTableInput(table), nil); err != nil {
		return fmt.Errorf("docstore: ensure table %s (needs dynamodb:CreateTable and dynamodb:DescribeTable): %w: %w", table, awsconf.Sentinel(err), err)
	}
	return nil
}
