// Package s3etag is the nameservice driver for Amazon S3 and S3-compatible
// object stores: records kept as the ns@v2 JSON-LD files of the filesystem
// driver (layout B, the default, or C), made safe for concurrent writers by
// S3's conditional requests.
//
// # URLs
//
//	s3://BUCKET/PREFIX?region=us-east-1&endpoint=http://127.0.0.1:7070&layout=b|c
//	    &path_style=true&dialect=spec|fluree-v4&timeout=10s&unsafe=false
//	    &lock=dynamodb%3A%2F%2FTABLE%3Fendpoint%3D...%26region%3D...
//
// Credentials come from the AWS default chain; AWS_ENDPOINT_URL_S3 and
// AWS_REGION are honoured. docs/s3.md describes every parameter.
//
// # Protocol
//
// The protocol is internal/objstore's, with ETags as version tags: a file
// is created with If-None-Match: * and replaced with If-Match: <etag>, and
// only these conditional PUTs decide between racing writers (docs/s3.md,
// "How writes work"). Open probes that the endpoint enforces them and
// refuses a store that does not, unless the URL names the DynamoDB lock
// protocol (lock=dynamodb://...) or says unsafe=true.
package s3etag

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Scheme is the URL scheme of this driver.
const Scheme = "s3"

func init() { drivers.Register(Scheme, drivers.Opens(ParseURL, Open)) }

// Defaults of Config.
const (
	DefaultRegion      = "us-east-1"
	DefaultTimeout     = 10 * time.Second
	DefaultMaxAttempts = 5
)

// Config says how Open reaches the bucket. Only Bucket is required.
type Config struct {
	Bucket string
	// Prefix is the key prefix under which ns@v2/ lives ("" or "a/b").
	Prefix   string
	Region   string // "" for the SDK's configured region, else DefaultRegion
	Endpoint string // "" for AWS (or AWS_ENDPOINT_URL_S3)
	Profile  string // shared config profile
	// PathStyle addresses the bucket in the path (http://host/bucket/key);
	// most S3-compatible servers need it.
	PathStyle bool
	Layout    jsonld.Layout
	Dialect   jsonld.Dialect // jsonld.Spec (the default) or jsonld.FlureeV4
	// Unsafe opens a store whose probe shows it ignores preconditions:
	// concurrent writers can then lose updates.
	Unsafe bool
	// Lock, when set, serialises conditional writes with the DynamoDB lock
	// protocol instead of S3's own preconditions.
	Lock *LockConfig
	// ListParallel bounds the objects List reads at once (0:
	// objstore.DefaultListParallel); URL parameter list_parallel.
	ListParallel int
	// Timeout bounds each HTTP attempt (0: DefaultTimeout); not used when
	// HTTPClient is set.
	Timeout     time.Duration
	MaxAttempts int // the SDK's attempts per request (0: DefaultMaxAttempts)
	// HTTPClient sends the S3 requests; nil means a new client.
	HTTPClient  s3.HTTPClient
	Credentials aws.CredentialsProvider
}

// Driver is an S3 nameservice. It is safe for concurrent use; any number
// of Drivers, in any number of processes, may share a bucket and prefix.
type Driver struct {
	client *s3.Client
	cfg    Config
	prefix string // "" or ending in "/"
	*records
	lock   *dynamoLock        // nil: S3 preconditions
	probed driver.ProbeResult // what the probe on open found
}

var (
	_ driver.Driver      = (*Driver)(nil)
	_ driver.Versioner   = (*Driver)(nil) // through objstore: a polling watch reads only what changed
	_ driver.Provisioner = (*Driver)(nil)
	_ driver.Provisioner = LockConfig{}
	_ driver.Brancher    = (*Driver)(nil) // through objstore
)

// Open builds an S3 client from cfg, probes the endpoint's conditional
// writes and returns the driver. It returns an error wrapping
// model.ErrInvalidArgument for a bad cfg, model.ErrUnsupported when the
// endpoint ignores preconditions, and model.ErrUnavailable when the bucket
// cannot be reached.
func Open(ctx context.Context, cfg Config) (*Driver, error) {
	if cfg.Bucket == "" {
		return nil, fmt.Errorf("s3: %w: no bucket", model.ErrInvalidArgument)
	}
	oc, err := objstore.NewConfig("s3", objstore.FileOptions{Layout: cfg.Layout, Dialect: cfg.Dialect, ListParallel: cfg.ListParallel})
	if err != nil {
		return nil, err
	}
	client, err := NewClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d := &Driver{client: client, cfg: cfg, prefix: objstore.KeyPrefix(cfg.Prefix)}
	d.records = objstore.New(store{d}, oc)
	if cfg.Lock != nil {
		if d.lock, err = newDynamoLock(ctx, *cfg.Lock); err != nil {
			return nil, err
		}
	}
	if err := d.probe(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// NewClient returns the S3 client Open builds for cfg: the SDK's retryer
// without its client-side rate limiter (which fails healthy requests under
// load), with short jittered backoff, retrying two 409s that say nothing
// was written: S3's ConditionalRequestConflict, and versitygw's
// ExistingObjectIsDirectory (a delete removed the folder under a put).
func NewClient(ctx context.Context, cfg Config) (*s3.Client, error) {
	if err := awsconf.CheckEndpoint(cfg.Endpoint); err != nil {
		return nil, fmt.Errorf("s3: %w: %v", model.ErrInvalidArgument, err)
	}
	awsCfg, err := awsconf.Load(ctx, cfg.Region, cfg.Profile, cfg.Credentials, DefaultRegion)
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = awsconf.HTTPClient(cfg.Timeout, DefaultTimeout)
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.HTTPClient = httpClient
		o.Retryer = awsconf.NewRetryer(driverutil.Positive(cfg.MaxAttempts, DefaultMaxAttempts), nil, 20*time.Millisecond,
			"ConditionalRequestConflict", codeIsDirectory)
		o.UsePathStyle = cfg.PathStyle
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		// Checksums only where S3 requires them: trailing checksums
		// (aws-chunked bodies) are not understood by every S3-compatible
		// server.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}), nil
}

// urlParams are the query parameters an s3 URL may carry.
var urlParams = awsconf.Known(append([]string{"path_style", "unsafe", "lock"}, objstore.FileParams...)...)

// ParseURL returns the Config an s3:// URL describes, or an error wrapping
// model.ErrInvalidArgument for credentials in the URL, an unknown parameter
// or a malformed value. path_style defaults to true when an endpoint is
// given (here or in AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL).
func ParseURL(u *url.URL) (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, drivers.BadURL("s3", u, format, args...)
	}
	p, err := awsconf.ParseParams(u, urlParams)
	if err != nil {
		return bad("%v", err)
	}
	q := u.Query()
	fo, err := objstore.ParseFileParams(q)
	if err != nil {
		return Config{}, fmt.Errorf("s3: %w", err)
	}
	cfg := Config{Bucket: u.Host, Prefix: u.Path, Region: p.Region, Endpoint: p.Endpoint, Profile: p.Profile,
		Timeout: p.Timeout, MaxAttempts: p.MaxAttempts, Layout: fo.Layout, Dialect: fo.Dialect, ListParallel: fo.ListParallel}
	cfg.PathStyle = cfg.Endpoint != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	for name, dst := range map[string]*bool{"path_style": &cfg.PathStyle, "unsafe": &cfg.Unsafe} {
		if s := q.Get(name); s != "" {
			if *dst, err = strconv.ParseBool(s); err != nil {
				return bad("%s %q is not true or false", name, s)
			}
		}
	}
	if s := q.Get("lock"); s != "" {
		lc, err := ParseLockURL(s)
		if err != nil {
			return Config{}, err
		}
		cfg.Lock = &lc
	}
	if cfg.Bucket == "" {
		return bad("no bucket (s3://BUCKET/PREFIX)")
	}
	return cfg, nil
}

// Provision implements driver.Provisioner: with the DynamoDB lock protocol
// it creates the lock table (LockConfig.Provision); otherwise it returns
// nil (the bucket must exist: the probe on Open writes to it).
func (d *Driver) Provision(ctx context.Context) error {
	if d.cfg.Lock == nil {
		return nil
	}
	return d.cfg.Lock.Provision(ctx)
}

// Client returns the S3 client the driver uses.
func (d *Driver) Client() *s3.Client { return d.client }

// Bucket returns the bucket the driver uses.
func (d *Driver) Bucket() string { return d.cfg.Bucket }

func (d *Driver) key(k string) string { return d.prefix + k }
