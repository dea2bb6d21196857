package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"nameservice.dev/nameservice/model"
)

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
	var (
		trimmed *stypes.TrimmedDataAccessException
		expired *stypes.ExpiredIteratorException
		missing *stypes.ResourceNotFoundException
		limit   *stypes.LimitExceededException
	)
	switch {
	case errors.As(err, &trimmed), errors.As(err, &expired):
		return fmt.Errorf("%w: %v", errStreamGap, err)
	case errors.As(err, &missing):
		return fmt.Errorf("%w: %v", model.ErrNotFound, err)
	case errors.As(err, &limit):
		return fmt.Errorf("%w: %v", model.ErrThrottled, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fmt.Errorf("%w: %v", model.ErrUnavailable, err)
}
