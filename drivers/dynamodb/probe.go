package dynamodb

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/awsconf"
)

// The checks of Probe, by the request they make.
const (
	ProbeConditionalUpdate = "UpdateItem with a failing ConditionExpression"
	ProbeReturnedItem      = "ReturnValuesOnConditionCheckFailure=ALL_OLD returns the item"
	ProbeTransactions      = "TransactWriteItems"
	ProbeClientToken       = "TransactWriteItems ClientRequestToken applied once"
	ProbeStream            = "a NEW_AND_OLD_IMAGES stream on the table"
)

// Probe implements driver.Prober: on an item of its own (a pk that is no
// valid ID, deleted at the end) it checks what the driver relies on, and
// reports what it merely uses (docs/dynamodb.md, Lost answers). A server
// that does not know an operation fails its check; any other error ends
// the probe.
func (d *Driver) Probe(ctx context.Context) (driver.ProbeResult, error) {
	if err := d.begin(ctx); err != nil {
		return driver.ProbeResult{}, err
	}
	pk := "~probe/" + newToken()
	defer d.client.DeleteItem(context.WithoutCancel(ctx), &dynamodb.DeleteItemInput{
		TableName: aws.String(d.table), Key: keyOf(pk, "a"),
	})
	var res driver.ProbeResult
	add := func(request string, enforced, required bool) {
		res.Checks = append(res.Checks, driver.ProbeCheck{Request: request, Enforced: enforced, Required: required})
	}
	if _, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: keyOf(pk, "a")}); err != nil {
		return res, d.fail(ctx, "probe", err)
	}
	refused, item, err := d.probeUpdate(ctx, pk)
	if err != nil {
		return res, err
	}
	add(ProbeConditionalUpdate, refused, true)
	add(ProbeReturnedItem, item, false)
	ran, once, err := d.probeToken(ctx, pk)
	if err != nil {
		return res, err
	}
	add(ProbeTransactions, ran, true)
	add(ProbeClientToken, once, true)
	t, err := d.describe(ctx, "probe")
	if err != nil {
		return res, err
	}
	s := t.StreamSpecification
	stream := s != nil && aws.ToBool(s.StreamEnabled) && s.StreamViewType == types.StreamViewTypeNewAndOldImages
	add(ProbeStream, stream, false)
	return res, nil
}

// probeUpdate sends an UpdateItem whose condition fails.
func (d *Driver) probeUpdate(ctx context.Context, pk string) (refused, item bool, err error) {
	_, err = d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(d.table), Key: keyOf(pk, "a"),
		UpdateExpression:                    aws.String("SET #x = :x"),
		ConditionExpression:                 aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames:            map[string]string{"#x": "x", "#pk": attrPK},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":x": stringAV("x")},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	switch ccf, failed := errors.AsType[*types.ConditionalCheckFailedException](err); {
	case failed:
		return true, len(ccf.Item) > 0, nil
	case err == nil || unknownOperation(err):
		return false, false, nil
	}
	return false, false, d.fail(ctx, "probe", err)
}

// probeToken runs a transaction under a token, then the same again and one
// with other parameters under the same token.
func (d *Driver) probeToken(ctx context.Context, pk string) (ran, once bool, err error) {
	tx := func(n string) *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("probe-" + pk[len("~probe/"):]),
			TransactItems: []types.TransactWriteItem{{Update: &types.Update{
				TableName: aws.String(d.table), Key: keyOf(pk, "a"),
				UpdateExpression:          aws.String("ADD #n :one"),
				ExpressionAttributeNames:  map[string]string{"#n": n},
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": numberAV(1)},
			}}}}
	}
	_, err = d.client.TransactWriteItems(ctx, tx("n"))
	switch {
	case unknownOperation(err):
		return false, false, nil
	case err != nil:
		return false, false, d.fail(ctx, "probe", err)
	}
	if _, err = d.client.TransactWriteItems(ctx, tx("n")); err != nil {
		return true, false, nil
	}
	_, err = d.client.TransactWriteItems(ctx, tx("m"))
	mismatch := awsconf.ErrorCodeOf(err) == "IdempotentParameterMismatchException"
	it, gerr := d.getItem(ctx, "probe", pk, "a")
	if gerr != nil {
		return true, false, gerr
	}
	n, _, _ := getInt(it, "n")
	_, hasM := it["m"]
	return true, mismatch && n == 1 && !hasM, nil
}

// unknownOperation reports whether the server does not know the operation.
func unknownOperation(err error) bool {
	return slices.Contains([]string{"UnknownOperationException", "UnknownOperation", "NotImplemented", "InvalidAction"},
		awsconf.ErrorCodeOf(err))
}
