package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/model"
)

// CreateTableInput returns the CreateTable request for the nameservice table
// of the guide, with its GSI gsi1-kind and a NEW_AND_OLD_IMAGES stream.
func CreateTableInput(table string) *dynamodb.CreateTableInput {
	keys, attrs := awsconf.KeySchema(attrPK, attrSK)
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: append(attrs, stringAttr(attrKind)),
		KeySchema:            keys,
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(IndexName),
			KeySchema: indexKeys(attrKind),
			Projection: &types.Projection{
				ProjectionType:   types.ProjectionTypeInclude,
				NonKeyAttributes: []string{attrName, attrBranch, attrSourceType, attrDependencies, attrRetracted},
			},
		}},
		BillingMode:         types.BillingModePayPerRequest,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	}
}

// Provision implements driver.Provisioner: it creates the driver's table
// (CreateTableInput) unless it exists and waits until it is ACTIVE
// (awsconf.EnsureTable). An existing table without the nameservice keys and
// GSI is an error wrapping model.ErrInvalidArgument that says what differs.
func (d *Driver) Provision(ctx context.Context) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	_, err := awsconf.EnsureTable(ctx, d.client, CreateTableInput(d.table), checkTable)
	return d.provisionError(ctx, err)
}

// provisionError wraps the error of awsconf.EnsureTable.
func (d *Driver) provisionError(ctx context.Context, err error) error {
	op := "provision table " + d.table
	switch {
	case err == nil:
		return nil
	case errors.Is(err, model.ErrInvalidArgument):
		return fmt.Errorf("dynamodb: %s: %w", op, err)
	case errors.Is(err, awsconf.ErrTableNotActive):
		return fmt.Errorf("dynamodb: %s: %w: %w", op, model.ErrUnavailable, err)
	}
	return d.fail(ctx, op, err)
}

// checkTable verifies an existing table's keys and GSI.
func checkTable(t *types.TableDescription) error {
	if !sameKeys(t.KeySchema, attrPK, attrSK) {
		return fmt.Errorf("%w: table %s is keyed %s, want pk (HASH) + sk (RANGE)", model.ErrInvalidArgument, aws.ToString(t.TableName), keysString(t.KeySchema))
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) != IndexName {
			continue
		}
		if !sameKeys(g.KeySchema, attrKind, attrPK) {
			return fmt.Errorf("%w: index %s is keyed %s, want kind (HASH) + pk (RANGE)", model.ErrInvalidArgument, IndexName, keysString(g.KeySchema))
		}
		return nil
	}
	return fmt.Errorf("%w: table %s has no global secondary index %s (List needs it)", model.ErrInvalidArgument, aws.ToString(t.TableName), IndexName)
}

func sameKeys(ks []types.KeySchemaElement, hash, rng string) bool {
	if len(ks) != 2 {
		return false
	}
	want := map[string]types.KeyType{hash: types.KeyTypeHash, rng: types.KeyTypeRange}
	for _, k := range ks {
		if want[aws.ToString(k.AttributeName)] != k.KeyType {
			return false
		}
	}
	return true
}

func keysString(ks []types.KeySchemaElement) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s (%s)", aws.ToString(k.AttributeName), k.KeyType)
	}
	return strings.Join(parts, " + ")
}

func stringAttr(name string) types.AttributeDefinition {
	return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
}

// indexKeys is the key schema of an index on hash, sorted by pk.
func indexKeys(hash string) []types.KeySchemaElement {
	keys, _ := awsconf.KeySchema(hash, attrPK)
	return keys
}
