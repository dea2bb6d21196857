// Package awsconf is what the AWS-backed drivers (DynamoDB, S3, S3's
// DynamoDB lock table, docstore over DynamoDB) share: configuration, URL
// parameters, HTTP clients, retryers, error classification, DynamoDB tables.
package awsconf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	//lint:ignore SA1019 otelaws is deprecated upstream for smithy-go's smithyoteltracing, which the module proxy this project uses does not serve; otelaws still works with this SDK (TestAWSSpansAreChildren)
	"go.opentelemetry.io/contrib/instrumentation/github.com/aws/aws-sdk-go-v2/otelaws"

	"nameservice.dev/nameservice/internal/telemetry"
	"nameservice.dev/nameservice/model"
)

// Load returns the configuration of the SDK's default chain (environment,
// shared files, instance metadata) with region, profile and creds applied
// when they are set, and defaultRegion when no region resolves ("" leaves it
// unset). It checks the credentials (CheckCredentials), so that a chain that
// finds none fails here, not at the first request. Other errors wrap
// model.ErrUnavailable.
func Load(ctx context.Context, region, profile string, creds aws.CredentialsProvider, defaultRegion string) (aws.Config, error) {
	// The SDK takes "" and nil for unset.
	c, err := config.LoadDefaultConfig(ctx, config.WithRegion(region), config.WithSharedConfigProfile(profile),
		config.WithCredentialsProvider(creds))
	if err != nil {
		return c, fmt.Errorf("%w: load AWS configuration: %v", model.ErrUnavailable, err)
	}
	c.Region = cmp.Or(c.Region, defaultRegion)
	// The SDK's spans, as children of an instrumented driver call; nothing
	// is traced for a call that is not (see telemetry.FollowContext).
	otelaws.AppendMiddlewares(&c.APIOptions, otelaws.WithTracerProvider(telemetry.FollowContext()))
	return c, CheckCredentials(ctx, c)
}

// CheckCredentials retrieves c's credentials once (the SDK caches them for
// the requests to come). A chain that finds none is a lasting error
// wrapping model.ErrPermissionDenied that says where credentials come
// from, never an unavailable backend.
func CheckCredentials(ctx context.Context, c aws.Config) error {
	if c.Credentials == nil {
		return nil // an anonymous client: requests go unsigned
	}
	if _, err := c.Credentials.Retrieve(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("load AWS credentials: %w", ctx.Err())
		}
		return fmt.Errorf("%w: no AWS credentials: %s (%v)", model.ErrPermissionDenied, credentialSources, err)
	}
	return nil
}

// credentialSources says where the SDK's default chain looks.
const credentialSources = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (or the URL's profile=) naming a " +
	"profile of ~/.aws/credentials or ~/.aws/config (SSO included), or AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, " +
	"or run with a container or EC2 instance role"

// CheckEndpoint checks an endpoint URL ("" for the service's own): http or
// https, a host, no credentials. Its error has no sentinel (callers add
// model.ErrInvalidArgument) and never repeats the endpoint, which may hold a
// secret.
func CheckEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		// url.Parse's message repeats the whole URL, password included.
		return errors.New("endpoint is not a valid URL (not repeated here: it may hold a secret)")
	case u.User != nil:
		return errors.New("endpoint holds credentials (user:password@); credentials come from the AWS credential chain")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("endpoint is not an http:// or https:// URL")
	case u.Host == "":
		return errors.New("endpoint names no host")
	}
	return nil
}

// RemoveBucket deletes every object of bucket, then the bucket, ignoring
// errors: tests and ns-bench call it when they end, whatever state they
// left the bucket they made in.
func RemoveBucket(ctx context.Context, client *s3.Client, bucket string) {
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return
		}
		for _, o := range page.Contents {
			_, _ = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key})
		}
	}
	_, _ = client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
}
