package dynamodb

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// A partition may hold rows beside a record's own items: Fluree v4's
// commit-index rows, one per published commit head.

// commitSK returns the sort key of the commit-index row of t: the prefix
// and t zero-padded, so that the rows sort by t.
func commitSK(t int64) string {
	return fmt.Sprintf("%s%0*d", skCommitPrefix, commitSKDigits, max(t, 0))
}

// indexCommit writes the commit-index row of head v when its address is a
// content ID, as Fluree's put_commit_index_item does: best effort (the
// index is an accelerator; its failure must not fail the publish).
func (d *Driver) indexCommit(ctx context.Context, pk string, v model.Value) {
	ref, ok := v.Ref()
	if !ok || cid.Parse(ref.Address) != nil {
		return
	}
	_, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: item{
		attrPK: stringAV(pk), attrSK: stringAV(commitSK(ref.T)), attrCommitCID: stringAV(ref.Address),
		attrCommitT: numberAV(ref.T), attrTTL: numberAV(time.Now().Unix() + commitRowTTL),
	}})
	if err != nil {
		slog.Debug("dynamodb: commit-index row not written", "pk", pk, "t", ref.T, "err", err)
	}
}

// PendingCommitCIDs implements driver.CommitIndexer as Fluree's
// pending_commit_cids does: a consistent Query of the rows from sinceT+1
// up; none means no usable index. Rows it cannot read are skipped.
func (d *Driver) PendingCommitCIDs(ctx context.Context, id model.ID, sinceT int64) ([]driver.CommitEntry, bool, error) {
	if err := d.begin(ctx); err != nil {
		return nil, false, err
	}
	if sinceT == math.MaxInt64 {
		return nil, false, nil
	}
	var out []driver.CommitEntry
	b := expression.NewBuilder().WithKeyCondition(
		skRange(id.String(), commitSK(sinceT+1), skCommitPrefix+strings.Repeat("9", commitSKDigits)))
	err := d.query(ctx, "pending commit cids "+id.String(), b, func(it item) {
		t, ok, err := getInt(it, attrCommitT)
		c, _ := getString(it, attrCommitCID)
		if ok && err == nil && cid.Parse(c) == nil {
			out = append(out, driver.CommitEntry{T: t, CID: c})
		}
	})
	slices.SortStableFunc(out, func(a, b driver.CommitEntry) int { return cmp.Compare(a.T, b.T) })
	return out, len(out) > 0, err
}

// PruneCommitIndex implements driver.CommitIndexer as Fluree's
// prune_commit_index does: it deletes the rows up to upToT.
func (d *Driver) PruneCommitIndex(ctx context.Context, id model.ID, upToT int64) error {
	if err := d.begin(ctx); err != nil {
		return err
	}
	if upToT < 0 {
		return nil
	}
	pk, op := id.String(), "prune commit index "+id.String()
	var sks []string
	b := expression.NewBuilder().WithKeyCondition(skRange(pk, commitSK(0), commitSK(upToT))).
		WithProjection(expression.NamesList(nameB(attrPK), nameB(attrSK)))
	err := d.query(ctx, op, b, func(it item) {
		if sk, ok := getString(it, attrSK); ok {
			sks = append(sks, sk)
		}
	})
	if err != nil {
		return err
	}
	return d.deleteRows(ctx, op, pk, sks)
}

// skRange is the key condition "partition pk, sort keys lo to hi".
func skRange(pk, lo, hi string) expression.KeyConditionBuilder {
	return expression.Key(attrPK).Equal(expression.Value(stringAV(pk))).
		And(expression.Key(attrSK).Between(expression.Value(stringAV(lo)), expression.Value(stringAV(hi))))
}

// maxBatchWrites is DynamoDB's limit of requests per BatchWriteItem.
const maxBatchWrites = 25

// deleteRows deletes the rows sks of partition pk with BatchWriteItem calls
// of up to 25 deletes, up to d.parallel() of them at once.
func (d *Driver) deleteRows(ctx context.Context, op, pk string, sks []string) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(d.parallel())
	for batch := range slices.Chunk(sks, maxBatchWrites) {
		reqs := make([]types.WriteRequest, len(batch))
		for i, sk := range batch {
			reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(pk, sk)}}
		}
		send := func(reqs []types.WriteRequest) ([]types.WriteRequest, error) {
			in := &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{d.table: reqs}}
			out, err := d.client.BatchWriteItem(gctx, in)
			if err != nil {
				return nil, d.fail(gctx, op+" (BatchWriteItem)", err)
			}
			return out.UnprocessedItems[d.table], nil
		}
		g.Go(func() error { return untilProcessed(gctx, op, "BatchWriteItem", "deletes", reqs, send) })
	}
	return g.Wait()
}

// untilProcessed sends reqs, then what send leaves unprocessed: at once
// while some get through, with backoff when none do, up to
// maxStalledBatches times, then model.ErrThrottled.
func untilProcessed[T any](ctx context.Context, op, call, what string, reqs []T, send func([]T) ([]T, error)) error {
	for stalled := 0; len(reqs) > 0; {
		left, err := send(reqs)
		switch {
		case err != nil:
			return err
		case len(left) < len(reqs):
			stalled = 0
		case stalled >= maxStalledBatches:
			return fmt.Errorf("dynamodb: %s: %w: %s left %d %s unprocessed after %d retries",
				op, model.ErrThrottled, call, len(left), what, maxStalledBatches)
		default:
			stalled++
			if err := driverutil.Sleep(ctx, driverutil.Jitter(50*time.Millisecond, 2*time.Second, stalled)); err != nil {
				return err
			}
		}
		reqs = left
	}
	return nil
}

// purged forgets record id, purged, and deletes the rows written into its
// partition while the purge ran, unless a record of the ID has been created
// since: the rows are then its own. The purge is done: rows it fails to
// delete (logged at debug level) stay for Collect, DynamoDB TTL or another
// purge.
func (d *Driver) purged(ctx context.Context, op string, id model.ID) {
	pk := id.String()
	d.kinds.Remove(id)
	d.incs.forget(pk)
	own, rows, err := d.partitionKeys(ctx, op, pk)
	if err == nil && len(own) == 0 {
		err = d.deleteRows(ctx, op, pk, rows)
	}
	if err != nil {
		slog.Debug("dynamodb: rows written during a purge not deleted", "pk", pk, "err", err)
	}
}

// Collect implements driver.Collector: it removes the rows of partitions
// whose record is gone (see Delete), found by one Scan of the table's keys
// (a read of every item: run it rarely), each partition confirmed by a
// consistent Query. A row whose ttl (written + 30 days) says it is younger
// than opts.OlderThan is kept; one without a ttl goes.
func (d *Driver) Collect(ctx context.Context, opts driver.CollectOptions) (driver.CollectStats, error) {
	var st driver.CollectStats
	if err := d.begin(ctx); err != nil {
		return st, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	orphans, err := d.scanRows(ctx, opts.Prefix)
	if err != nil {
		return st, err
	}
	for _, pk := range slices.Sorted(maps.Keys(orphans)) {
		items, err := d.queryRecord(ctx, "collect "+pk, pk)
		if err != nil {
			return st, err
		}
		if len(items) > 0 {
			continue // a record lives here (created since the scan): its rows are its own
		}
		if err := d.collectRows(ctx, pk, orphans[pk], opts, now(), &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// orphanRow is a row Collect found.
type orphanRow struct {
	sk        string
	writtenAt int64 // Unix seconds; 0: unknown
}

// scanRows returns, by pk, the rows of partitions under prefix without a
// record item.
func (d *Driver) scanRows(ctx context.Context, prefix string) (map[string][]orphanRow, error) {
	in := &dynamodb.ScanInput{
		TableName:                aws.String(d.table),
		ProjectionExpression:     aws.String("#pk, #sk, #ttl"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#sk": attrSK, "#ttl": attrTTL},
		ConsistentRead:           aws.Bool(true),
	}
	if prefix != "" {
		in.FilterExpression = aws.String("begins_with(#pk, :prefix)")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":prefix": stringAV(prefix)}
	}
	rows, live := map[string][]orphanRow{}, map[string]bool{}
	err := d.scan(ctx, "collect", in, 1, func(it item) error {
		pk, _ := getString(it, attrPK)
		sk, _ := getString(it, attrSK)
		if isRecordSK(sk) {
			live[pk] = true
		} else {
			ttl, _, _ := getInt(it, attrTTL)
			rows[pk] = append(rows[pk], orphanRow{sk: sk, writtenAt: max(ttl-commitRowTTL, 0)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	maps.DeleteFunc(rows, func(pk string, _ []orphanRow) bool { return live[pk] })
	return rows, nil
}

// collectRows removes (in a dry run, reports) the rows of partition pk,
// keeping those younger than opts.OlderThan.
func (d *Driver) collectRows(ctx context.Context, pk string, rows []orphanRow, opts driver.CollectOptions, now time.Time, st *driver.CollectStats) error {
	report := func(sk string, removed bool, reason string) {
		driverutil.Report(opts, st, driver.Collected{Object: pk + "/" + sk, ID: pk, Removed: removed, Reason: reason})
	}
	var gone []string
	for _, r := range rows {
		age := now.Sub(time.Unix(r.writtenAt, 0))
		if r.writtenAt > 0 && opts.OlderThan > 0 && age < opts.OlderThan {
			report(r.sk, false, fmt.Sprintf("written %s ago, younger than %s", age.Round(time.Second), opts.OlderThan))
			continue
		}
		gone = append(gone, r.sk)
	}
	if !opts.DryRun {
		if err := d.deleteRows(ctx, "collect "+pk, pk, gone); err != nil {
			return err
		}
	}
	for _, sk := range gone {
		report(sk, true, "row of a purged record")
	}
	return nil
}
