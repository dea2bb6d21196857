package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// Watch implements driver.Watcher from the table's NEW_AND_OLD_IMAGES
// stream (docs/dynamodb.md, Watch): it positions itself at the latest
// records, reads the watched records as a baseline, and maps each stream
// record to an event (see apply). When records were lost to the reader, it
// starts again and reports the difference (see recover). On a table
// without a stream it returns an error wrapping model.ErrUnsupported: the
// portable Watch then polls.
func (d *Driver) Watch(ctx context.Context, opts driver.WatchOptions) (<-chan driver.Event, error) {
	if err := d.begin(ctx); err != nil {
		return nil, err
	}
	s, err := d.openStream(ctx)
	if err != nil {
		return nil, err
	}
	w := &watch{d: d, s: s, opts: opts, kinds: map[model.ID]model.Kind{}}
	if w.known, err = w.read(ctx, nil); err != nil {
		return nil, err
	}
	ch := make(chan driver.Event, 64)
	go w.run(ctx, ch)
	return ch, nil
}

type watch struct {
	d     *Driver
	s     *stream
	opts  driver.WatchOptions
	known map[model.ID]*model.Record // the watched records as last reported
	// kinds holds the kinds learnt of records the stream showed, when
	// opts selects a kind.
	kinds map[model.ID]model.Kind
}

func (w *watch) run(ctx context.Context, ch chan<- driver.Event) {
	defer close(ch)
	send := func(ev driver.Event) bool { return driverutil.Send(ctx, ch, ev) }
	failures, gap := 0, false
	for ctx.Err() == nil {
		var n int
		var err error
		if gap {
			if err = w.recover(ctx, send); err == nil {
				gap = false
				continue // only a round that reads the stream clears failures
			}
		} else {
			n, err = w.s.round(ctx, func(r stypes.Record) bool {
				for _, ev := range w.apply(ctx, r) {
					if !send(ev) {
						return false
					}
				}
				return true
			})
			if errors.Is(err, errStreamGap) {
				slog.Warn("dynamodb: watch lost stream records; re-reading the watched records", "table", w.d.table, "err", err)
				gap = true // counted as a failure: a stream that keeps losing records ends the watch
			}
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if failures++; failures > maxStreamFailures || errors.Is(err, model.ErrNotFound) {
				send(driver.Event{Err: err})
				return
			}
			if driverutil.Sleep(ctx, driverutil.Jitter(100*time.Millisecond, 5*time.Second, failures)) != nil {
				return
			}
			continue
		}
		failures = 0
		if n == 0 && driverutil.Sleep(ctx, streamIdle) != nil {
			return
		}
	}
}

// recover starts the stream again at its latest records, then re-reads the
// watched records and reports how they differ from what was last reported.
func (w *watch) recover(ctx context.Context, send func(driver.Event) bool) error {
	if err := w.s.restart(ctx); err != nil {
		return err
	}
	now, err := w.read(ctx, w.known)
	if err != nil {
		return err
	}
	for _, ev := range driverutil.Changes(w.opts, w.known, now) {
		if !send(ev) {
			return ctx.Err()
		}
	}
	w.known = now
	return nil
}

// read returns the watched records. One that cannot be read keeps its value
// in prev (prev is nil for the baseline).
func (w *watch) read(ctx context.Context, prev map[model.ID]*model.Record) (map[model.ID]*model.Record, error) {
	recs := map[model.ID]*model.Record{}
	if !w.opts.ID.IsZero() {
		r, err := w.d.Get(ctx, w.opts.ID)
		switch {
		case errors.Is(err, model.ErrNotFound):
		case driverutil.PerRecord(err) && prev[w.opts.ID] != nil:
			recs[w.opts.ID] = prev[w.opts.ID]
		case err != nil:
			return nil, err
		case w.opts.Kind == "" || r.Kind == w.opts.Kind:
			recs[r.ID] = r
		}
		return recs, nil
	}
	lo := driver.ListOptions{Prefix: w.opts.Prefix, Kind: w.opts.Kind, IncludeRetracted: true, PageSize: 500}
	for {
		page, err := w.d.List(ctx, lo)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Records {
			recs[r.ID] = r
		}
		for _, f := range page.Failed {
			if old := prev[f.ID]; old != nil {
				recs[f.ID] = old
			}
		}
		if page.NextPageToken == "" {
			return recs, nil
		}
		lo.PageToken = page.NextPageToken
	}
}

// apply maps one stream record to the events it causes and notes the new
// value in w.known: a changed concern item gives an event, the removal of a
// meta item a Deleted one. A change w.opts does not select is dropped
// before its images are decoded.
func (w *watch) apply(ctx context.Context, r stypes.Record) []driver.Event {
	if r.Dynamodb == nil {
		return nil
	}
	pk, sk := streamString(r.Dynamodb.Keys, attrPK), streamString(r.Dynamodb.Keys, attrSK)
	if !w.watched(pk) || !isRecordSK(sk) {
		return nil // other rows of the partition (Fluree's commit index) are no concern
	}
	id, err := model.ParseID(pk)
	if err != nil {
		return nil
	}
	known := w.known[id]
	if sk == skMeta {
		w.noteKind(id, r)
		if r.EventName != stypes.OperationTypeRemove || known == nil {
			return nil // identity and retraction are not watched concerns
		}
		delete(w.known, id)
		return []driver.Event{{ID: id, Deleted: true}}
	}
	if r.EventName == stypes.OperationTypeRemove || r.Dynamodb.NewImage == nil {
		return nil // a concern item goes only with its record: the meta's removal reports it
	}
	c := concernOfSK(sk)
	if !w.opts.Watches(c) {
		return nil
	}
	// Converted by the SDK: its two packages declare the same attribute
	// values as different types.
	img, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.NewImage)
	if err != nil {
		slog.Warn("dynamodb: watch skips an unreadable stream record", "table", w.d.table, "err", err)
		return nil
	}
	if w.opts.Kind != "" && w.kindOf(ctx, id, sk, img) != w.opts.Kind {
		return nil
	}
	nv, err := layoutOfItem(sk, img).decode(pk, img)
	if err != nil {
		slog.Warn("dynamodb: watch skips an unreadable stream record", "table", w.d.table, "err", err)
		return nil
	}
	if known == nil {
		known = &model.Record{ID: id, Meta: model.Meta{Kind: w.opts.Kind}}
		w.known[id] = known
	}
	var old model.Value
	if v := known.Value(c); v != nil {
		old = *v
		if old.Equal(nv) || !w.follows(r, sk, pk, old) {
			return nil // no change, or one the baseline already holds
		}
	}
	known.SetValue(c, nv)
	return []driver.Event{{ID: id, Concern: c, Old: old.V, New: nv.Clone()}}
}

// noteKind notes the kind a meta item's new image shows, when the watch
// selects a kind, and forgets it when the item goes.
func (w *watch) noteKind(id model.ID, r stypes.Record) {
	if w.opts.Kind == "" {
		return
	}
	if r.EventName == stypes.OperationTypeRemove {
		delete(w.kinds, id)
		return
	}
	if k := streamString(r.Dynamodb.NewImage, attrKind); k != "" {
		w.kinds[id] = model.Kind(k)
	}
}

// kindOf returns the kind of record id, whose item sk the stream shows as
// img: from what the watch knows, from the item, or else from one read of
// the meta item. "" means the record is gone.
func (w *watch) kindOf(ctx context.Context, id model.ID, sk string, img item) model.Kind {
	if rec := w.known[id]; rec != nil && rec.Kind != "" {
		return rec.Kind
	}
	if k := w.kinds[id]; k != "" {
		return k
	}
	var k model.Kind
	switch sk {
	case skHead:
		k = model.Ledger
	case skConfig:
		k = model.Ledger
		if configLayoutOf(img).shape == sourceConfigShape {
			k = model.GraphSource
		}
	default:
		meta, err := w.d.getItem(ctx, "kind of "+id.String(), id.String(), skMeta)
		if err != nil {
			// Better an event of the other kind than a lost one.
			slog.Warn("dynamodb: watch cannot read a record's kind; reporting its change", "table", w.d.table, "err", err)
			return w.opts.Kind
		}
		s, _ := getString(meta, attrKind) // "": the record is gone
		k = model.Kind(s)
	}
	if k != "" {
		w.kinds[id] = k
	}
	return k
}

// follows reports whether the change r starts from old, the value last
// reported: a change older than the baseline does not.
func (w *watch) follows(r stypes.Record, sk, pk string, old model.Value) bool {
	if r.Dynamodb.OldImage == nil {
		return true
	}
	img, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.OldImage)
	if err != nil {
		return true
	}
	ov, err := layoutOfItem(sk, img).decode(pk, img)
	return err != nil || ov.Equal(old)
}

func (w *watch) watched(pk string) bool {
	if !w.opts.ID.IsZero() {
		return pk == w.opts.ID.String()
	}
	return strings.HasPrefix(pk, w.opts.Prefix)
}

func streamString(it map[string]stypes.AttributeValue, name string) string {
	if s, ok := it[name].(*stypes.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// streamIdle is the wait after a round that returned nothing: DynamoDB
// allows 5 GetRecords per second per shard, shared by every reader.
const streamIdle = 200 * time.Millisecond

// maxStreamFailures bounds consecutive failed stream calls.
const maxStreamFailures = 5

// stream reads a table's DynamoDB stream shard by shard.
type stream struct {
	client *dynamodbstreams.Client
	arn    string
	seen   map[string]bool // every shard met: a shard not in it is new
	done   map[string]bool // shards read to their end
	// reading are the shards being read, in order, with their next iterators;
	// one read to its end ("") stays until its children are adopted.
	reading []*shardIter
}

type shardIter struct{ id, iter string }

// openStream returns a reader of the table's stream positioned at its
// latest records, or an error wrapping model.ErrUnsupported when the table
// has no NEW_AND_OLD_IMAGES stream.
func (d *Driver) openStream(ctx context.Context) (*stream, error) {
	t, err := d.describe(ctx, "watch")
	if err != nil {
		return nil, err
	}
	spec := t.StreamSpecification
	if spec == nil || !aws.ToBool(spec.StreamEnabled) || aws.ToString(t.LatestStreamArn) == "" {
		return nil, fmt.Errorf("dynamodb: watch: %w: table %s has no stream (enable a NEW_AND_OLD_IMAGES stream to watch it without polling)", model.ErrUnsupported, d.table)
	}
	if spec.StreamViewType != "NEW_AND_OLD_IMAGES" {
		return nil, fmt.Errorf("dynamodb: watch: %w: the stream of table %s shows %s, not NEW_AND_OLD_IMAGES", model.ErrUnsupported, d.table, spec.StreamViewType)
	}
	// A Streams client configured like the driver's DynamoDB client, custom
	// endpoint included (DynamoDB Local serves both APIs on one).
	o := d.client.Options()
	client := dynamodbstreams.New(dynamodbstreams.Options{Region: o.Region, Credentials: o.Credentials,
		HTTPClient: o.HTTPClient, Retryer: o.Retryer, BaseEndpoint: o.BaseEndpoint, Logger: o.Logger})
	s := &stream{client: client, arn: aws.ToString(t.LatestStreamArn)}
	if err := s.restart(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// restart forgets every iterator and starts again at the latest record of
// every open shard.
func (s *stream) restart(ctx context.Context) error {
	s.seen, s.done, s.reading = map[string]bool{}, map[string]bool{}, nil
	shards, err := s.shards(ctx)
	if err != nil {
		return err
	}
	for _, sh := range shards {
		id := aws.ToString(sh.ShardId)
		s.seen[id] = true
		if sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil {
			s.done[id] = true // closed: its records are older than the watch
			continue
		}
		if err := s.open(ctx, id, stypes.ShardIteratorTypeLatest); err != nil {
			return err
		}
	}
	return nil
}

// shards lists every shard of the stream.
func (s *stream) shards(ctx context.Context) ([]stypes.Shard, error) {
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(s.arn)}
	var all []stypes.Shard
	for {
		out, err := s.client.DescribeStream(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("dynamodb: watch (DescribeStream): %w", streamError(err))
		}
		all = append(all, out.StreamDescription.Shards...)
		last := out.StreamDescription.LastEvaluatedShardId
		if last == nil {
			return all, nil
		}
		in.ExclusiveStartShardId = last
	}
}

func (s *stream) open(ctx context.Context, shard string, at stypes.ShardIteratorType) error {
	out, err := s.client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: aws.String(s.arn), ShardId: aws.String(shard), ShardIteratorType: at,
	})
	if err != nil {
		return fmt.Errorf("dynamodb: watch (GetShardIterator): %w", streamError(err))
	}
	s.reading = append(s.reading, &shardIter{shard, aws.ToString(out.ShardIterator)})
	return nil
}

// round calls GetRecords once on every open shard and passes the records
// to emit. A shard read to its end is replaced by its children (see
// adoptChildren).
func (s *stream) round(ctx context.Context, emit func(stypes.Record) bool) (n int, err error) {
	if err := s.adoptChildren(ctx); err != nil {
		return 0, err
	}
	for _, sh := range s.reading {
		if sh.iter == "" {
			continue
		}
		out, err := s.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(sh.iter)})
		if err != nil {
			return n, fmt.Errorf("dynamodb: watch (GetRecords): %w", streamError(err))
		}
		for _, r := range out.Records {
			if !emit(r) {
				return n, ctx.Err()
			}
		}
		n += len(out.Records)
		if sh.iter = aws.ToString(out.NextShardIterator); sh.iter == "" {
			s.done[sh.id] = true
		}
	}
	return n, s.adoptChildren(ctx)
}

// adoptChildren, when a shard was read to its end, starts reading the new
// shards whose parent is done or unknown (so one item's changes stay in
// order across resharding), then drops the shards read to their end.
func (s *stream) adoptChildren(ctx context.Context) error {
	ended := func(sh *shardIter) bool { return sh.iter == "" }
	if !slices.ContainsFunc(s.reading, ended) {
		return nil
	}
	shards, err := s.shards(ctx)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, sh := range shards {
		known[aws.ToString(sh.ShardId)] = true
	}
	for _, sh := range shards {
		id, parent := aws.ToString(sh.ShardId), aws.ToString(sh.ParentShardId)
		if s.seen[id] || (parent != "" && known[parent] && !s.done[parent]) {
			continue // already read, or wait until the parent is done
		}
		if err := s.open(ctx, id, stypes.ShardIteratorTypeTrimHorizon); err != nil {
			return err
		}
		s.seen[id] = true
	}
	s.reading = slices.DeleteFunc(s.reading, ended)
	return nil
}

// errStreamGap says records were lost to the reader (trimmed past the 24 h
// retention, or an iterator expired): the watch must re-read to recover.
var errStreamGap = errors.New("stream records lost")

// streamError maps a DynamoDB Streams error to errStreamGap or a sentinel.
func streamError(err error) error {
	switch {
	case errors.As(err, new(*stypes.TrimmedDataAccessException)),
		errors.As(err, new(*stypes.ExpiredIteratorException)):
		return fmt.Errorf("%w: %v", errStreamGap, err)
	case errors.As(err, new(*stypes.ResourceNotFoundException)):
		return fmt.Errorf("%w: %v", model.ErrNotFound, err)
	case errors.As(err, new(*stypes.LimitExceededException)):
		return fmt.Errorf("%w: %v", model.ErrThrottled, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("%w: %v", model.ErrUnavailable, err)
}
