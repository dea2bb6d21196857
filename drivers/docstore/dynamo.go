package docstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/docstore"
	dsdynamodb "gocloud.dev/docstore/awsdynamodb/v2"

	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// ParamNoCRC32 is this driver's own query parameter of docstore+dynamodb
// URLs: "disable_response_crc32=true" turns off the DynamoDB client's CRC32
// check of responses, which DynamoDB Local's error responses fail. Without
// it the check is off exactly when the endpoint is not AWS's own
// (awsconf.LocalDynamoDB). gocloud's URL opener cannot set it, so the
// driver builds the client itself (docs/docstore.md).
const ParamNoCRC32 = "disable_response_crc32"

// dynamoTable is what Provision needs to create and open the DynamoDB
// table of a docstore+dynamodb URL.
type dynamoTable struct {
	client *awsdynamodb.Client
	name   string
	opts   *dsdynamodb.Options
}

// openDynamoDB opens the collection of u (prefix stripped, defaults filled)
// as awsdynamodb's URL opener would, with the client's response CRC32
// check as ParamNoCRC32 says. A table that does not exist leaves the
// driver waiting for Provision.
func openDynamoDB(ctx context.Context, u *url.URL) (*Driver, error) {
	t, err := dynamoTableOf(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("docstore: open %s: %w", drivers.Redact(u), err)
	}
	d := newDriver(nil, t, func() error { return nil }, false)
	coll, err := t.open()
	switch {
	case err == nil:
		d.coll, d.release = coll, coll.Close
	case errors.Is(classifyOpen(ctx, err), model.ErrNotProvisioned):
		// Provision creates the table and opens the collection.
	default:
		return nil, fmt.Errorf("docstore: open %s: %w", drivers.Redact(u), classifyOpen(ctx, err))
	}
	return d, nil
}

func dynamoTableOf(ctx context.Context, u *url.URL) (*dynamoTable, error) {
	q := u.Query()
	noCRC := q.Get(ParamNoCRC32) == "true" || !q.Has(ParamNoCRC32) && awsconf.LocalDynamoDB(q.Get("endpoint"))
	if q.Get("partition_key") != fieldKey || q.Has("sort_key") {
		return nil, fmt.Errorf("%w: the table's key is the string attribute %q alone: no other partition_key, no sort_key", model.ErrInvalidArgument, fieldKey)
	}
	t := &dynamoTable{name: u.Host, opts: &dsdynamodb.Options{
		AllowScans:     q.Get("allow_scans") == "true",
		ConsistentRead: q.Get("consistent_read") == "true",
	}}
	for _, k := range []string{ParamNoCRC32, "allow_scans", "consistent_read", "partition_key"} {
		q.Del(k)
	}
	if u.Host == "" || u.Path != "" {
		return nil, fmt.Errorf("%w: docstore+dynamodb://TABLE takes the table as host and no path", model.ErrInvalidArgument)
	}
	if err := awsconf.CheckEndpoint(q.Get("endpoint")); err != nil {
		return nil, fmt.Errorf("%w: %v", model.ErrInvalidArgument, err)
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", model.ErrInvalidArgument, err)
	}
	if err := awsconf.CheckCredentials(ctx, cfg); err != nil {
		return nil, err
	}
	// gocloud's URL parameters set the endpoint; the CRC32 check follows the
	// module's rule (awsconf.LocalDynamoDB) unless ParamNoCRC32 says otherwise.
	t.client = awsdynamodb.NewFromConfig(cfg, func(o *awsdynamodb.Options) {
		o.DisableValidateResponseChecksum = noCRC
		// The DynamoDB driver's retry policy: the SDK's default backs off up
		// to 20 s and its retry quota fails healthy requests under load.
		o.Retryer = awsconf.SkipIf(awsconf.NewRetryer(awsconf.DefaultMaxAttempts, nil, awsconf.BaseBackoff), isLostWrite)
		o.APIOptions = append(o.APIOptions, markLostWrites)
	})
	return t, nil
}

// lostWrite marks the error of a write attempt that may have been applied
// (awsconf.MaybeApplied), so that the SDK does not send it again: a blind
// resend of a conditional write that landed fails its own condition, and
// the driver would take its own write for another's. objstore resolves
// such an attempt itself, from what the table holds (store.MaybeApplied).
type lostWrite struct{ error }

func (e lostWrite) Unwrap() error { return e.error }

func isLostWrite(err error) bool { return errors.As(err, new(lostWrite)) }

// dynamoWrites are the DynamoDB operations that change items.
var dynamoWrites = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true,
	"BatchWriteItem": true, "TransactWriteItems": true}

// markLostWrites adds, inside the SDK's retry loop, the middleware that
// marks the lost answers of writes (lostWrite).
func markLostWrites(stack *middleware.Stack) error {
	mark := middleware.FinalizeMiddlewareFunc("MarkLostWrites", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleFinalize(ctx, in)
		if err != nil && dynamoWrites[awsmiddleware.GetOperationName(ctx)] && awsconf.MaybeApplied(err) {
			err = lostWrite{err}
		}
		return out, md, err
	})
	return stack.Finalize.Insert(mark, "Retry", middleware.After)
}

// open opens the collection; gocloud describes the table to do so.
func (t *dynamoTable) open() (*docstore.Collection, error) {
	return dsdynamodb.OpenCollection(t.client, t.name, fieldKey, "", t.opts)
}

// Provision implements driver.Provisioner. For a docstore+dynamodb URL it
// creates the table (hash key "key", a string, billed PAY_PER_REQUEST, no
// index) unless it exists, waits until it is ACTIVE and
// opens the collection; it needs dynamodb:CreateTable and
// dynamodb:DescribeTable. Other collections need nothing created (memdocstore
// keeps them in memory, Firestore and MongoDB create them on first write),
// nor does a collection given to OpenCollection: Provision returns nil.
func (d *Driver) Provision(ctx context.Context) error {
	if err := objstore.Begin(ctx, d.records); err != nil {
		return err
	}
	if d.table == nil {
		return nil
	}
	t := d.table
	in := &awsdynamodb.CreateTableInput{TableName: aws.String(t.name), BillingMode: types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(fieldKey), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(fieldKey), AttributeType: types.ScalarAttributeTypeS}}}
	if _, err := awsconf.EnsureTable(ctx, t.client, in, nil); err != nil {
		return fmt.Errorf("docstore: provision table %s (needs dynamodb:CreateTable and dynamodb:DescribeTable): %w: %w", t.name, awsconf.Code(err).Sentinel(), err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.coll != nil {
		return nil
	}
	coll, err := t.open()
	if err != nil {
		return fmt.Errorf("docstore: open table %s: %w", t.name, classifyOpen(ctx, err))
	}
	d.coll, d.release = coll, coll.Close
	return nil
}
