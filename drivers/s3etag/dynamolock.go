package s3etag

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// Defaults of LockConfig, those of object_store's DynamoCommit.
const (
	DefaultLockTimeout  = 20 * time.Second
	DefaultLockSkewRate = 3
	DefaultLockTTL      = time.Hour
	DefaultLockPoll     = 100 * time.Millisecond
)

// LockConfig configures the DynamoDB lock protocol of
// object-store-dynamo-commit.md: a table with keys "path" and "etag" (S),
// numbers "ttl" (the TTL attribute), "generation" and "timeout" (ms), and
// the holder's "owner" token (S), which only this driver uses.
type LockConfig struct {
	Table    string
	Region   string
	Endpoint string
	Profile  string
	// Timeout is the lease: a holder's write must finish within it, and a
	// lock is taken over Timeout × SkewRate after it was first seen held.
	Timeout  time.Duration
	SkewRate int
	TTL      time.Duration // how long lock records stay before DynamoDB's TTL removes them
	Poll     time.Duration // how soon a waiter first re-checks the object (then less often, up to 4 × Poll)

	HTTPClient  dynamodb.HTTPClient
	Credentials aws.CredentialsProvider
}

var lockParams = []string{"region", "endpoint", "profile", "timeout", "skew", "ttl", "poll"}

// ParseLockURL parses dynamodb://TABLE?region=&endpoint=&profile=&timeout=20s&skew=3&ttl=1h&poll=100ms.
func ParseLockURL(raw string) (LockConfig, error) {
	u, err := url.Parse(raw)
	bad := func(format string, args ...any) (LockConfig, error) {
		shown := "(unparsable)"
		if u != nil {
			shown = drivers.Redact(u)
		}
		return LockConfig{}, fmt.Errorf("s3: %w: lock URL %q: %s", model.ErrInvalidArgument, shown, fmt.Sprintf(format, args...))
	}
	if err != nil {
		return bad("does not parse")
	}
	if u.Scheme != "dynamodb" || u.Host == "" || u.User != nil {
		return bad("want dynamodb://TABLE?region=&endpoint=")
	}
	p, err := awsconf.ParseParams(u, lockParams)
	if err != nil {
		return bad("%v", err)
	}
	q := u.Query()
	lc := LockConfig{Table: u.Host, Region: p.Region, Endpoint: p.Endpoint, Profile: p.Profile, Timeout: p.Timeout}
	for name, dst := range map[string]*time.Duration{"ttl": &lc.TTL, "poll": &lc.Poll} {
		if s := q.Get(name); s != "" {
			if *dst, err = time.ParseDuration(s); err != nil || *dst <= 0 {
				return bad("%s %q is not a positive duration", name, s)
			}
		}
	}
	if s := q.Get("skew"); s != "" {
		if lc.SkewRate, err = strconv.Atoi(s); err != nil || lc.SkewRate < 1 {
			return bad("skew %q is not a positive integer", s)
		}
	}
	return lc, nil
}

type dynamoLock struct {
	client *dynamodb.Client
	cfg    LockConfig
}

func newDynamoLock(ctx context.Context, lc LockConfig) (*dynamoLock, error) {
	lc.Timeout = driverutil.Positive(lc.Timeout, DefaultLockTimeout)
	lc.SkewRate = driverutil.Positive(lc.SkewRate, DefaultLockSkewRate)
	lc.TTL = driverutil.Positive(lc.TTL, DefaultLockTTL)
	lc.Poll = driverutil.Positive(lc.Poll, DefaultLockPoll)
	client, err := NewLockClient(ctx, lc)
	return &dynamoLock{client: client, cfg: lc}, err
}

// NewLockClient returns the DynamoDB client of the lock protocol.
func NewLockClient(ctx context.Context, lc LockConfig) (*dynamodb.Client, error) {
	if lc.Table == "" {
		return nil, fmt.Errorf("s3: %w: lock table not named", model.ErrInvalidArgument)
	}
	if err := awsconf.CheckEndpoint(lc.Endpoint); err != nil {
		return nil, fmt.Errorf("s3: lock: %w: %v", model.ErrInvalidArgument, err)
	}
	awsCfg, err := awsconf.Load(ctx, lc.Region, lc.Profile, lc.Credentials, DefaultRegion)
	if err != nil {
		return nil, fmt.Errorf("s3: lock: %w", err)
	}
	var httpClient dynamodb.HTTPClient = awsconf.HTTPClient(0, 5*time.Second)
	if lc.HTTPClient != nil {
		httpClient = lc.HTTPClient
	}
	retryer := awsconf.NewRetryer(retry.DefaultMaxAttempts, nil, 20*time.Millisecond)
	return dynamodb.NewFromConfig(awsCfg, awsconf.DynamoDBOptions(lc.Endpoint, httpClient, retryer)), nil
}

// Provision implements driver.Provisioner: it creates the lock table (key
// path + etag, on-demand billing, TTL on "ttl") unless it exists, and waits
// until it is active (dynamodb:CreateTable, DescribeTable, UpdateTimeToLive).
func (lc LockConfig) Provision(ctx context.Context) error {
	client, err := NewLockClient(ctx, lc)
	if err != nil {
		return err
	}
	keys, attrs := awsconf.KeySchema("path", "etag")
	created, err := awsconf.EnsureTable(ctx, client, &dynamodb.CreateTableInput{TableName: aws.String(lc.Table),
		BillingMode: types.BillingModePayPerRequest, KeySchema: keys, AttributeDefinitions: attrs}, nil)
	if err != nil {
		return lockFail(fmt.Sprintf("provision lock table %s", lc.Table), lc.Table, err)
	}
	if created {
		_, _ = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &lc.Table,
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("ttl"), Enabled: aws.Bool(true)}})
	}
	return nil
}

func lockFail(op, table string, err error) error {
	switch awsconf.Code(err) {
	case model.Throttled:
		return fmt.Errorf("s3: lock: %s: %w: %w", op, model.ErrThrottled, err)
	case model.NotProvisioned:
		return fmt.Errorf("s3: lock: %s: %w: lock table %q does not exist; create it with `ns table create` or Provision: %w",
			op, model.ErrNotProvisioned, table, err)
	case model.PermissionDenied:
		return fmt.Errorf("s3: lock: %s: %w: DynamoDB refused the credentials or the permission for dynamodb:%s on lock table %q; grant it: %w",
			op, model.ErrPermissionDenied, awsconf.Operation(err), table, err)
	}
	return fmt.Errorf("s3: lock: %s: %w: %w", op, model.ErrUnavailable, err)
}

// LockKey returns the lock record's key for a conditional write of object
// key expecting etag ("" for a create): "BUCKET/KEY", and the quoted ETag
// or "*".
func LockKey(bucket, key, etag string) (path, sortKey string) {
	if etag == "" {
		return bucket + "/" + key, "*"
	}
	return bucket + "/" + key, quote(etag)
}

// lease is a lock record as seen, and when this process first saw its
// generation.
type lease struct {
	generation int64
	timeout    time.Duration
	seen       time.Time
	owner      string
	released   bool
}

// conditional runs op, an unconditional write of key, when pc holds, as
// the protocol says: take the lock record (path, etag), check pc with a
// HEAD under it, write within the lease, release.
func (l *dynamoLock) conditional(ctx context.Context, d *Driver, key string, pc objstore.Precondition, op func(context.Context) error) error {
	path, sk := LockKey(d.cfg.Bucket, d.key(key), pc.Tag)
	gen, acquired, err := l.acquire(ctx, d, key, path, sk, pc)
	if err != nil {
		return err
	}
	release := true
	defer func() {
		if release {
			l.release(path, sk, gen)
		}
	}()
	if err := checkPrecond(ctx, d, key, pc); err != nil {
		return err
	}
	opCtx, cancel := context.WithDeadline(ctx, acquired.Add(l.cfg.Timeout))
	defer cancel()
	err = op(opCtx)
	if err != nil && (ctx.Err() != nil || opCtx.Err() != nil || (store{}).MaybeApplied(err) && !errors.Is(err, model.ErrThrottled)) {
		// The write may still land, held up on its way: released now, the
		// next writer from this ETag would write unconditionally and the
		// held-up write land over it. The lock stays held, to be taken
		// over after timeout × skew as a dead holder's, unless the key
		// shows the write landed already. (A SlowDown refused the write.)
		release = l.landed(ctx, d, key, pc)
	}
	if err != nil && ctx.Err() == nil && opCtx.Err() != nil {
		// The lease ran out, not the caller's time: the write may still
		// land, so the outcome is unknown (maybeApplied holds).
		return fmt.Errorf("s3: %s: %w: the write was not done within its lock lease (%v); its outcome is unknown", key, model.ErrUnavailable, l.cfg.Timeout)
	}
	return err
}

// landed reports whether key no longer meets pc after a write under the
// lock whose answer was lost: the write landed (nothing else writes key
// from pc's ETag while the lock is held). false when the read fails.
func (l *dynamoLock) landed(ctx context.Context, d *Driver, key string, pc objstore.Precondition) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(l.cfg.Timeout, 5*time.Second))
	defer cancel()
	err := checkPrecond(ctx, d, key, pc)
	return errors.Is(err, objstore.ErrPrecondition) || errors.Is(err, objstore.ErrMissing)
}

func checkPrecond(ctx context.Context, d *Driver, key string, pc objstore.Precondition) error {
	etag, err := store{d}.Head(ctx, key)
	switch {
	case err != nil:
		return err
	case pc.Tag != "" && etag == "":
		return fmt.Errorf("s3: write %s: %w", key, objstore.ErrMissing)
	case pc.Absent && etag != "" || pc.Tag != "" && etag != pc.Tag:
		return fmt.Errorf("s3: write %s: %w", key, objstore.ErrPrecondition)
	}
	return nil
}

// acquire takes the lock record, waiting while another holder has it and
// taking it over (generation + 1) once its timeout × skew rate has passed
// since it was first seen; it re-checks pc while waiting, so a holder's
// write ends the wait with a failed precondition. Its own owner token in
// the record lets an attempt the SDK sent again after a lost answer know
// the lock as its own, rather than wait out its own lease.
func (l *dynamoLock) acquire(ctx context.Context, d *Driver, key, path, sk string, pc objstore.Precondition) (int64, time.Time, error) {
	var held *lease
	owner := driverutil.Token()
	for waits := 0; ; waits++ {
		takeover := held != nil && time.Since(held.seen) > held.timeout*time.Duration(l.cfg.SkewRate)
		start := time.Now()
		gen, cur, err := l.try(ctx, path, sk, owner, held, takeover)
		if err != nil {
			return 0, time.Time{}, err
		}
		if cur == nil {
			return gen, start, nil
		}
		if held == nil || cur.generation != held.generation {
			cur.seen = time.Now()
			held = cur
		}
		// Backing off: many waiters re-checking every Poll flooded a
		// loaded DynamoDB until its answers timed out.
		if err := driverutil.Sleep(ctx, l.cfg.Poll/2+driverutil.Jitter(l.cfg.Poll/2, 7*l.cfg.Poll/2, waits)); err != nil {
			return 0, time.Time{}, fmt.Errorf("s3: lock: %s %s: %w (waited %d times; generation %d held since %v ago, taken over after %v)",
				path, sk, err, waits+1, held.generation, time.Since(held.seen).Round(time.Millisecond), held.timeout*time.Duration(l.cfg.SkewRate))
		}
		if err := checkPrecond(ctx, d, key, pc); err != nil {
			return 0, time.Time{}, err
		}
	}
}

// try writes the lock record for owner when it is absent or released, or
// (takeover) still at held's generation, and returns the new generation,
// or the holder's lease when another owner has it.
func (l *dynamoLock) try(ctx context.Context, path, sk, owner string, held *lease, takeover bool) (int64, *lease, error) {
	now := time.Now()
	cond := "attribute_not_exists(#p) OR #r = :true"
	values := map[string]types.AttributeValue{
		":true": &types.AttributeValueMemberBOOL{Value: true},
		":f":    &types.AttributeValueMemberBOOL{Value: false},
		":one":  num(1),
		":zero": num(0),
		":to":   num(l.cfg.Timeout.Milliseconds()),
		":ttl":  num(now.Add(l.cfg.TTL).Unix()),
		":o":    &types.AttributeValueMemberS{Value: owner},
	}
	names := map[string]string{"#p": "path", "#g": "generation", "#to": "timeout", "#ttl": "ttl", "#r": "released", "#o": "owner"}
	update := "SET #g = if_not_exists(#g, :zero) + :one, #to = :to, #ttl = :ttl, #r = :f, #o = :o"
	if takeover {
		cond = "#g = :g"
		values[":g"] = num(held.generation)
		delete(values, ":true")
		delete(names, "#p")
	}
	out, err := l.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           &l.cfg.Table,
		Key:                                 lockItemKey(path, sk),
		UpdateExpression:                    &update,
		ConditionExpression:                 &cond,
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		cur := leaseOf(ccf.Item)
		if cur.owner == owner && !cur.released {
			return cur.generation, nil, nil // taken by this try's first attempt
		}
		return 0, cur, nil
	case err != nil:
		return 0, nil, lockFail("acquire "+path+" "+sk, l.cfg.Table, err)
	}
	return leaseOf(out.Attributes).generation, nil, nil
}

func lockItemKey(path, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"path": &types.AttributeValueMemberS{Value: path}, "etag": &types.AttributeValueMemberS{Value: sk},
	}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func leaseOf(item map[string]types.AttributeValue) *lease {
	var v struct {
		Generation int64  `dynamodbav:"generation"`
		Owner      string `dynamodbav:"owner"`
		Released   bool   `dynamodbav:"released"`
		Timeout    *int64 `dynamodbav:"timeout"` // ms; DefaultLockTimeout when absent
	}
	// The lock table's items, ours and object_store's, give each member this
	// type; a member of another type would leave the fields not yet read at
	// zero.
	_ = attributevalue.UnmarshalMap(item, &v)
	l := &lease{generation: v.Generation, owner: v.Owner, released: v.Released, timeout: DefaultLockTimeout}
	if v.Timeout != nil {
		l.timeout = time.Duration(*v.Timeout) * time.Millisecond
	}
	return l
}

// release marks the record released if it is still ours, so the next
// writer of this (path, etag) need not wait out the timeout (object_store's
// writers do not release). It gets as long as a holder's write, since one
// not done holds the next writer up for a takeover: on a loaded DynamoDB a
// shorter bound left locks held and writers stalled.
func (l *dynamoLock) release(path, sk string, gen int64) {
	ctx, cancel := context.WithTimeout(context.Background(), max(l.cfg.Timeout, 5*time.Second))
	defer cancel()
	cond, update := "#g = :g", "SET #r = :true"
	_, _ = l.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &l.cfg.Table,
		Key:                       lockItemKey(path, sk),
		UpdateExpression:          &update,
		ConditionExpression:       &cond,
		ExpressionAttributeNames:  map[string]string{"#g": "generation", "#r": "released"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": num(gen), ":true": &types.AttributeValueMemberBOOL{Value: true}},
	})
}
