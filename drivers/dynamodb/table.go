package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/driverutil"
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

// Provision implements driver.Provisioner with awsconf.EnsureTable. An
// existing table without the nameservice keys and GSI is an error wrapping
// model.ErrInvalidArgument that says what differs. It needs
// dynamodb:CreateTable and dynamodb:DescribeTable.
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

// The schema's two optional indexes, sorted by pk. The source-type index
// also holds retracted, so that a listing leaves retracted graph sources
// out before reading them.
var optionalIndexes = []struct {
	name, hash string
	projection types.Projection
}{
	{StateIndexName, attrStatusState, types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
	{SourceTypeIndexName, attrSourceType, types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{attrRetracted}}},
}

// CreateTableInputWithIndexes returns CreateTableInput(table) with the
// schema's two optional indexes, as `ns table create --indexes` does.
func CreateTableInputWithIndexes(table string) *dynamodb.CreateTableInput {
	in := CreateTableInput(table)
	for _, ix := range optionalIndexes {
		in.AttributeDefinitions = append(in.AttributeDefinitions, stringAttr(ix.hash))
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.name),
			KeySchema:  indexKeys(ix.hash),
			Projection: &ix.projection,
		})
	}
	return in
}

// ProvisionIndexes is Provision with the schema's two optional indexes: it
// creates the table with them, or runs UpgradeTable on an existing one
// (and needs what UpgradeTable needs).
func (d *Driver) ProvisionIndexes(ctx context.Context) (Upgrade, error) {
	if err := d.begin(ctx); err != nil {
		return Upgrade{}, err
	}
	created, err := awsconf.EnsureTable(ctx, d.client, CreateTableInputWithIndexes(d.table), checkTable)
	if err != nil {
		return Upgrade{}, d.provisionError(ctx, err)
	}
	if created {
		d.forgetIndexes()
		return Upgrade{Added: []string{StateIndexName, SourceTypeIndexName}}, nil
	}
	return d.UpgradeTable(ctx)
}

// Upgrade reports what UpgradeTable did.
type Upgrade struct {
	// Added names the indexes it created.
	Added []string
	// Backfilled counts the status items whose status_state it set (or
	// removed) to match their status.
	Backfilled int
}

// UpgradeTable brings an existing table to the schema's optional indexes
// while clients write: it back-fills status_state (see backfillItem), then
// adds the indexes it lacks, one at a time, and waits until each is ACTIVE.
// It is idempotent: run again, it back-fills what writers that do not keep
// status_state (Fluree) wrote since. It needs dynamodb:Scan,
// dynamodb:UpdateItem, dynamodb:DescribeTable and dynamodb:UpdateTable.
func (d *Driver) UpgradeTable(ctx context.Context) (Upgrade, error) {
	if err := d.begin(ctx); err != nil {
		return Upgrade{}, err
	}
	var up Upgrade
	var err error
	if up.Backfilled, err = d.backfillStates(ctx); err != nil {
		return up, err
	}
	for _, ix := range optionalIndexes {
		added, err := d.addIndex(ctx, ix.name, ix.hash, ix.projection)
		if err != nil {
			return up, err
		}
		if added {
			up.Added = append(up.Added, ix.name)
		}
	}
	d.forgetIndexes()
	return up, nil
}

// addIndex creates index name on hash unless the table has it, waits until
// it is ACTIVE, and reports whether it created it.
func (d *Driver) addIndex(ctx context.Context, name, hash string, proj types.Projection) (bool, error) {
	op := "upgrade table " + d.table + ": add index " + name
	t, err := d.describe(ctx, op)
	if err != nil {
		return false, err
	}
	switch indexStatus(t, name) {
	case types.IndexStatusActive:
		return false, nil
	case "":
		gsi := &types.CreateGlobalSecondaryIndexAction{IndexName: aws.String(name), KeySchema: indexKeys(hash),
			Projection: &proj, ProvisionedThroughput: provisioned(t)}
		_, err := d.client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName:                   aws.String(d.table),
			AttributeDefinitions:        []types.AttributeDefinition{stringAttr(hash)},
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: gsi}},
		})
		if err != nil {
			return false, d.fail(ctx, op, err)
		}
	}
	return true, d.waitIndex(ctx, op, name)
}

// provisioned returns the throughput of a new index: gsi1-kind's, else the
// table's; nil for an on-demand table.
func provisioned(t *types.TableDescription) *types.ProvisionedThroughput {
	if t.BillingModeSummary != nil && t.BillingModeSummary.BillingMode == types.BillingModePayPerRequest {
		return nil
	}
	src := t.ProvisionedThroughput
	for _, g := range t.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == IndexName && g.ProvisionedThroughput != nil {
			src = g.ProvisionedThroughput
		}
	}
	if src == nil || aws.ToInt64(src.ReadCapacityUnits) == 0 {
		return nil
	}
	return &types.ProvisionedThroughput{ReadCapacityUnits: src.ReadCapacityUnits, WriteCapacityUnits: src.WriteCapacityUnits}
}

// waitIndex polls DescribeTable until index name is ACTIVE, as long as ctx
// allows: on a large table DynamoDB builds an index for hours.
func (d *Driver) waitIndex(ctx context.Context, op, name string) error {
	for {
		t, err := d.describe(ctx, op)
		if err != nil {
			return err
		}
		switch indexStatus(t, name) {
		case types.IndexStatusActive:
			return nil
		case "", types.IndexStatusDeleting:
			return fmt.Errorf("dynamodb: %s: the index is gone (deleted meanwhile?)", op)
		}
		if err := driverutil.Sleep(ctx, awsconf.TablePoll); err != nil {
			return fmt.Errorf("dynamodb: %s: still building when the wait ended: %w", op, err)
		}
	}
}

func (d *Driver) describe(ctx context.Context, op string) (*types.TableDescription, error) {
	out, err := d.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(d.table)})
	if err != nil {
		return nil, d.fail(ctx, op+" (DescribeTable)", err)
	}
	return out.Table, nil
}

// indexStatus returns the status of index name, "" when the table has none.
func indexStatus(t *types.TableDescription, name string) types.IndexStatus {
	for _, g := range t.GlobalSecondaryIndexes {
		if aws.ToString(g.IndexName) == name {
			if g.IndexStatus == "" {
				return types.IndexStatusActive // DynamoDB Local leaves it out
			}
			return g.IndexStatus
		}
	}
	return ""
}

// indexCache holds the table's optional indexes, described again at most
// every indexRecheck, so that a long-running client follows index changes.
type indexCache struct {
	mu     sync.Mutex
	known  bool
	at     time.Time
	has    map[string]bool // the optional indexes by name: ACTIVE or not
	warned sync.Map        // the costly listings already logged
}

// indexRecheck is how long a description is trusted.
const indexRecheck = 5 * time.Minute

// indexes returns the table's optional indexes that are ACTIVE. A failed
// description counts as none: the listing then costs more, but works.
func (d *Driver) indexes(ctx context.Context) map[string]bool {
	c := &d.ix
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known && time.Since(c.at) < indexRecheck {
		return c.has
	}
	out, err := d.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(d.table)})
	if err != nil {
		if ctx.Err() == nil {
			slog.Warn("dynamodb: cannot describe the table to find its indexes; listing by state or source type without them",
				"table", d.table, "err", err)
			c.known, c.at = true, time.Now()
		}
		return c.has
	}
	c.known, c.at = true, time.Now()
	c.has = map[string]bool{} // a new map: the one returned before may still be read
	for _, ix := range optionalIndexes {
		c.has[ix.name] = indexStatus(out.Table, ix.name) == types.IndexStatusActive
	}
	return c.has
}

// forgetIndexes makes the next listing describe the table again.
func (d *Driver) forgetIndexes() {
	d.ix.mu.Lock()
	defer d.ix.mu.Unlock()
	d.ix.known = false
}

// warnCost logs, once per kind of listing, its cost without its index.
func (d *Driver) warnCost(what, cost string) {
	if _, done := d.ix.warned.LoadOrStore(what, true); !done {
		slog.Warn("dynamodb: "+what+" without its index: "+cost+"; `ns table upgrade` adds the index", "table", d.table)
	}
}

// backfillStates sets status_state to match the status on every status
// item where it does not, and returns how many it changed.
func (d *Driver) backfillStates(ctx context.Context) (int, error) {
	const op = "upgrade table: back-fill status_state"
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(d.table),
		FilterExpression:          aws.String("#sk = :status AND (attribute_not_exists(#ss) OR #ss <> #st)"),
		ProjectionExpression:      aws.String("#pk, #sk, #st, #sv, #ss"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK, "#st": attrStatus, "#sv": attrStatusV, "#ss": attrStatusState},
		ExpressionAttributeValues: map[string]types.AttributeValue{":status": stringAV(skStatus)},
	}
	var n atomic.Int64
	err := d.scan(ctx, op, in, d.parallel(), func(it item) error {
		changed, err := d.backfillItem(ctx, op, it)
		if changed {
			n.Add(1)
		}
		return err
	})
	return int(n.Load()), err
}

// maxBackfillAttempts bounds the attempts on one item.
const maxBackfillAttempts = 5

// backfillItem makes one status item's status_state match its status, on
// condition the item still holds the status and status_v it read, so that a
// racing push is never overwritten (a failed one starts again from the
// item returned). It reports whether it wrote.
func (d *Driver) backfillItem(ctx context.Context, op string, it item) (bool, error) {
	pk, _ := getString(it, attrPK)
	for range maxBackfillAttempts {
		st, ok := getString(it, attrStatus)
		sv, hasV := it[attrStatusV]
		if !ok || !hasV {
			return false, nil // no readable status: nothing to mirror (Get reports such an item)
		}
		want := indexedState(st)
		have, isS := getString(it, attrStatusState)
		if _, ok := it[attrStatusState]; want == nil && !ok || want != nil && isS && have == st {
			return false, nil
		}
		upd := "SET #ss = :ss"
		vals := map[string]types.AttributeValue{":st": stringAV(st), ":sv": sv}
		if want == nil {
			upd = "REMOVE #ss"
		} else {
			vals[":ss"] = want
		}
		_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(d.table), Key: keyOf(pk, skStatus),
			UpdateExpression:                    aws.String(upd),
			ConditionExpression:                 aws.String("#st = :st AND #sv = :sv"),
			ExpressionAttributeNames:            map[string]string{"#ss": attrStatusState, "#st": attrStatus, "#sv": attrStatusV},
			ExpressionAttributeValues:           vals,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		ccf, ok := errors.AsType[*types.ConditionalCheckFailedException](err)
		switch {
		case err == nil:
			return true, nil
		case !ok:
			return false, d.fail(ctx, op+" "+pk, err)
		case len(ccf.Item) == 0:
			return false, nil // purged meanwhile
		}
		it = ccf.Item
	}
	return false, fmt.Errorf("dynamodb: %s %s: the status kept changing under %d attempts; run the upgrade again", op, pk, maxBackfillAttempts)
}

// scan runs in as a parallel Scan of segments segments and hands each item
// to fn, from several goroutines at once. The first error ends it.
func (d *Driver) scan(ctx context.Context, op string, in *dynamodb.ScanInput, segments int, fn func(item) error) error {
	g, gctx := errgroup.WithContext(ctx)
	for seg := range segments {
		in := *in
		if segments > 1 {
			in.Segment, in.TotalSegments = aws.Int32(int32(seg)), aws.Int32(int32(segments))
		}
		g.Go(func() error {
			for p := dynamodb.NewScanPaginator(d.client, &in); p.HasMorePages(); {
				out, err := p.NextPage(gctx)
				if err != nil {
					return d.fail(ctx, op+" (Scan)", err)
				}
				for _, it := range out.Items {
					if err := fn(it); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

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
	pk := "~probe/" + driverutil.Token()
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
