package testenv

import (
	"context"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// CorruptFile overwrites the defining file of id, in a file store at dir of
// layout l, with bytes that are no JSON (a conformance.CorruptFunc body).
func CorruptFile(dir string, l jsonld.Layout, id model.ID) error {
	files, err := layout.Files(l, id)
	if err != nil {
		return err
	}
	// Replaced by a rename, as a writer would: truncating in place would be
	// seen, for a moment, as the empty file of an unfinished create.
	path := filepath.Join(dir, filepath.FromSlash(files[0].Key))
	if err := os.WriteFile(path+".junk", []byte("{not json"), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".junk", path)
}

// CorruptDynamoDB gives the meta item of id in table a retracted flag of
// the wrong type, so the record no longer decodes.
func CorruptDynamoDB(ctx context.Context, c *awsdynamodb.Client, table string, id model.ID) error {
	_, err := c.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
		TableName: &table,
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: id.String()},
			"sk": &types.AttributeValueMemberS{Value: "meta"},
		},
		UpdateExpression:          aws.String("SET retracted = :x"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: "junk"}},
	})
	return err
}
