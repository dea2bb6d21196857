// Package dynamodb is the nameservice driver for Amazon DynamoDB: one table,
// one partition per record and one item per concern, exactly the wire schema
// of the DynamoDB nameservice guide (pk/sk, items meta|head|index|config|status,
// GSI gsi1-kind), so that it shares a table with Fluree's own nameservice.
//
//	dynamodb://TABLE?region=us-east-1&endpoint=http://127.0.0.1:8000&profile=dev&timeout=5s
//
// Credentials come from the AWS default chain. docs/dynamodb.md has the URL
// parameters, the table definition, IAM policy and costs, the requests of
// each method, and what this driver and Fluree v4 each read and write in a
// table they share.
//
// # Errors
//
// A missing table wraps model.ErrNotProvisioned, refused credentials or
// permissions model.ErrPermissionDenied naming the action (both lasting),
// throttling that outlasts the SDK's retries model.ErrThrottled, a request
// DynamoDB rejects as malformed model.ErrInvalidArgument. No error contains
// credentials.
package dynamodb

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	lru "github.com/hashicorp/golang-lru/v2"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// Scheme is the URL scheme of this driver.
const Scheme = "dynamodb"

// Defaults of Config.
const (
	DefaultRegion      = "us-east-1"
	DefaultTimeout     = 5 * time.Second
	DefaultMaxAttempts = awsconf.DefaultMaxAttempts
)

func init() { drivers.Register(Scheme, drivers.Opens(ParseURL, Open)) }

// Config says how Open builds its DynamoDB client. Only Table is required.
type Config struct {
	Table    string // the table name
	Region   string // "" for the SDK's configured region, else DefaultRegion
	Endpoint string // "" for AWS (or AWS_ENDPOINT_URL_DYNAMODB); e.g. http://127.0.0.1:8000
	Profile  string // shared config profile; "" for the default

	// Timeout bounds each HTTP request (one attempt); 0 means DefaultTimeout.
	// It is not used when HTTPClient is set.
	Timeout time.Duration
	// MaxAttempts is the SDK's attempts per request; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// RetryRateLimiter limits the SDK's retries across requests; nil means
	// none (ratelimit.None).
	RetryRateLimiter retry.RateLimiter
	// HTTPClient sends the requests; nil means a new client with Timeout.
	HTTPClient dynamodb.HTTPClient
	// Credentials overrides the default credential chain when set.
	Credentials aws.CredentialsProvider
	// ListParallel bounds the batch calls in flight: the BatchGetItem
	// calls of one List page, the BatchWriteItem calls of one purge or
	// prune; 0 means DefaultListParallel.
	ListParallel int
	// AWSConfig, when set, is used instead of loading the shared AWS
	// configuration (Profile is then ignored; Region and Credentials still
	// override it). Loading takes milliseconds; share one when opening many
	// clients.
	AWSConfig *aws.Config
}

// Driver is a nameservice driver over one DynamoDB table. It is safe for
// concurrent use.
type Driver struct {
	client *dynamodb.Client
	table  string
	kinds  kindCache
	incs   incCache
	ix     indexCache // the table's optional indexes, for List
	closed driverutil.ClosedFlag
	idle   interface{ CloseIdleConnections() } // the HTTP client Open built, if any

	listParallel int // Config.ListParallel
}

var (
	_ driver.Driver        = (*Driver)(nil)
	_ driver.Provisioner   = (*Driver)(nil)
	_ driver.Brancher      = (*Driver)(nil)
	_ driver.HeadsReader   = (*Driver)(nil)
	_ driver.ChangeTimer   = (*Driver)(nil)
	_ driver.Prober        = (*Driver)(nil)
	_ driver.CommitIndexer = (*Driver)(nil)
	_ driver.Collector     = (*Driver)(nil)
	_ driver.Watcher       = (*Driver)(nil)
)

// OpenClient returns a driver over table using client, a client the caller
// built, as it is configured (its retryer, rate limiter and HTTP client),
// except that conditional writes are never retried by the SDK after a
// response that may hide an applied write: the driver resolves those itself.
func OpenClient(client *dynamodb.Client, table string) *Driver {
	kinds, _ := lru.New[model.ID, struct{}](maxCachedKinds) // fails only for a size below 1
	incs, _ := lru.New[string, string](maxCachedIncarnations)
	return &Driver{client: client, table: table, kinds: kindCache{kinds}, incs: incCache{incs}}
}

// Open builds a DynamoDB client from cfg and returns a driver over cfg.Table.
// It sends no request. Its error wraps model.ErrInvalidArgument for an
// incomplete cfg, model.ErrUnavailable when the AWS configuration cannot be
// loaded.
func Open(ctx context.Context, cfg Config) (*Driver, error) {
	client, httpClient, err := newClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d := OpenClient(client, cfg.Table)
	d.listParallel = cfg.ListParallel
	d.idle, _ = httpClient.(interface{ CloseIdleConnections() })
	return d, nil
}

// NewClient returns the DynamoDB client Open would build for cfg, for tools
// and tests that also need raw access to the table.
func NewClient(ctx context.Context, cfg Config) (*dynamodb.Client, error) {
	c, _, err := newClient(ctx, cfg)
	return c, err
}

func newClient(ctx context.Context, cfg Config) (*dynamodb.Client, dynamodb.HTTPClient, error) {
	err := validTable(cfg.Table)
	if err != nil {
		return nil, nil, err
	}
	if err := awsconf.CheckEndpoint(cfg.Endpoint); err != nil {
		return nil, nil, fmt.Errorf("dynamodb: %w: %v", model.ErrInvalidArgument, err)
	}
	var awsCfg aws.Config
	if cfg.AWSConfig != nil {
		awsCfg = cfg.AWSConfig.Copy()
		if cfg.Credentials != nil {
			awsCfg.Credentials = cfg.Credentials
		}
	} else if awsCfg, err = awsconf.Load(ctx, cfg.Region, cfg.Profile, cfg.Credentials, ""); err != nil {
		return nil, nil, fmt.Errorf("dynamodb: %w", err)
	}
	awsCfg.Region = cmp.Or(cfg.Region, awsCfg.Region, DefaultRegion)
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = awsconf.HTTPClient(cfg.Timeout, DefaultTimeout)
	}
	// TransactionConflictException: refused because another transaction
	// holds the item; nothing was written, so a retry is safe.
	retryer := awsconf.NewRetryer(driverutil.Positive(cfg.MaxAttempts, DefaultMaxAttempts), cfg.RetryRateLimiter,
		awsconf.BaseBackoff, "TransactionConflictException")
	client := dynamodb.NewFromConfig(awsCfg, awsconf.DynamoDBOptions(cfg.Endpoint, httpClient, retryer))
	return client, httpClient, nil
}

// validTable checks DynamoDB's table-name rules: 3 to 255 of [A-Za-z0-9_.-].
func validTable(name string) error {
	if len(name) < 3 || len(name) > 255 {
		return fmt.Errorf("dynamodb: %w: table name %q must be 3 to 255 characters", model.ErrInvalidArgument, name)
	}
	if strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
	}) {
		return fmt.Errorf("dynamodb: %w: table name %q may hold only letters, digits, '_', '.' and '-'", model.ErrInvalidArgument, name)
	}
	return nil
}

// urlParams are the query parameters a dynamodb URL may carry.
var urlParams = awsconf.Known("retry_limiter", "list_parallel")

// ParseURL returns the Config a dynamodb:// URL describes. It returns an
// error wrapping model.ErrInvalidArgument for a path, an unknown parameter
// or a malformed value.
func ParseURL(u *url.URL) (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, drivers.BadURL("dynamodb", u, format, args...)
	}
	p, err := awsconf.ParseParams(u, urlParams)
	if err != nil {
		return bad("%v", err)
	}
	if u.Path != "" && u.Path != "/" {
		return bad("the table is the host (dynamodb://TABLE), not a path")
	}
	q := u.Query()
	cfg := Config{Table: u.Host, Region: p.Region, Endpoint: p.Endpoint, Profile: p.Profile, Timeout: p.Timeout, MaxAttempts: p.MaxAttempts}
	if s := q.Get("list_parallel"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxListParallel {
			return bad("list_parallel %q is not an integer from 1 to %d", s, MaxListParallel)
		}
		cfg.ListParallel = n
	}
	switch q.Get("retry_limiter") {
	case "", "none":
	case "standard":
		cfg.RetryRateLimiter = ratelimit.NewTokenRateLimit(retry.DefaultRetryRateTokens)
	default:
		return bad("retry_limiter %q is neither none nor standard", q.Get("retry_limiter"))
	}
	if err := validTable(cfg.Table); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Client returns the DynamoDB client the driver uses.
func (d *Driver) Client() *dynamodb.Client { return d.client }

// Table returns the table the driver uses.
func (d *Driver) Table() string { return d.table }

// Close implements driver.Driver. Later calls return an error wrapping
// model.ErrInvalidArgument.
func (d *Driver) Close() error {
	if d.closed.Close() && d.idle != nil {
		d.idle.CloseIdleConnections()
	}
	return nil
}

func (d *Driver) begin(ctx context.Context) error {
	return d.closed.Check(ctx, "dynamodb")
}

func (d *Driver) nowMS() int64 { return time.Now().UnixMilli() }

// kindCache remembers which records this client has seen as graph sources,
// for config updates (a ledger's config item and a graph source's differ).
// Any other record is guessed a ledger, and the update's condition checks
// the guess: a stale entry costs one request, never a wrong write. IDs are
// stored as copies: one read from a response shares that response's 4 KB
// string arena, which a cached ID would keep alive.
type kindCache struct{ *lru.Cache[model.ID, struct{}] }

// maxCachedKinds bounds the cache; the least recently used go first.
const maxCachedKinds = 100_000

func (c kindCache) get(id model.ID) model.Kind {
	if _, ok := c.Get(id); ok {
		return model.GraphSource
	}
	return model.Ledger
}

func (c kindCache) put(id model.ID, k model.Kind) {
	if k != model.GraphSource {
		c.Remove(id)
	} else if !c.Contains(id) {
		c.Add(model.ID{Name: strings.Clone(id.Name), Branch: strings.Clone(id.Branch)}, struct{}{})
	}
}

// fail wraps an SDK error from operation op (e.g. "update mydb:main head")
// with the driver sentinel that classifies it. The SDK's messages never
// carry credentials.
func (d *Driver) fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("dynamodb: %s: %w (%v)", op, ctx.Err(), err)
	}
	if unknownOperation(err) {
		return fmt.Errorf("dynamodb: %s: %w: the server does not support %s (it answered %s); use Amazon DynamoDB or a server that implements it",
			op, model.ErrUnsupported, awsconf.Operation(err), awsconf.ErrorCodeOf(err))
	}
	switch awsconf.Code(err) {
	case model.Throttled:
		return fmt.Errorf("dynamodb: %s: %w: still throttled after the SDK's retries: %w", op, model.ErrThrottled, err)
	case model.NotProvisioned:
		return fmt.Errorf("dynamodb: %s: %w: table %q (or its index %s) does not exist in this region and account, or is not ACTIVE; "+
			"create it with `ns table create` or Provision: %w", op, model.ErrNotProvisioned, d.table, IndexName, err)
	case model.PermissionDenied:
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB refused the credentials or the permission for dynamodb:%s on table %q; "+
			"grant it to the caller's IAM identity (docs/dynamodb.md lists the policy): %w", op, model.ErrPermissionDenied, awsconf.Operation(err), d.table, err)
	}
	if c := awsconf.ErrorCodeOf(err); c == "ValidationException" || c == "SerializationException" {
		return fmt.Errorf("dynamodb: %s: %w: DynamoDB rejected the request: %w", op, model.ErrInvalidArgument, err)
	}
	return fmt.Errorf("dynamodb: %s: %w: %w", op, model.ErrUnavailable, err)
}

// conditionalWriteOptions makes the SDK stop retrying a conditional write
// after an attempt that may have been applied: a blind retry could land a
// second time, on a record created since; the driver resolves it itself.
func conditionalWriteOptions(o *dynamodb.Options) {
	o.Retryer = awsconf.SkipIf(o.Retryer, awsconf.MaybeApplied)
}
