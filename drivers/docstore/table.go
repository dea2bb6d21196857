package docstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
)

// tableWaitLimit bounds the wait for a new table to become ACTIVE.
const tableWaitLimit = 2 * time.Minute

// DynamoDBTableInput returns the CreateTable request for a table that
// docstore+dynamodb URLs can use: key pk (HASH) + sk (RANGE), strings,
// billed PAY_PER_REQUEST, no index. It is not the native dynamodb driver's
// table: keep the two apart.
func DynamoDBTableInput(table string) *dynamodb.CreateTableInput {
	s := types.ScalarAttributeTypeS
	return &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(fieldPK), AttributeType: s},
			{AttributeName: aws.String(fieldSK), AttributeType: s},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(fieldPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(fieldSK), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
}

// EnsureDynamoDBTable creates the table of DynamoDBTableInput unless it
// exists, and waits until it is ACTIVE. gocloud's DynamoDB collection
// describes its table when it is opened, so call this first. It needs
// dynamodb:CreateTable and dynamodb:DescribeTable.
func EnsureDynamoDBTable(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.CreateTable(ctx, DynamoDBTableInput(table))
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("docstore: create table %s: %w: %v", table, driver.ErrUnavailable, err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, 2*time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, tableWaitLimit); err != nil {
		return fmt.Errorf("docstore: wait for table %s: %w: %v", table, driver.ErrUnavailable, err)
	}
	return nil
}
