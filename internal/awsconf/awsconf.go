// Package awsconf is the one AWS layer of the module: what the AWS-backed
// drivers (DynamoDB, S3, S3's DynamoDB lock table, docstore over DynamoDB)
// share. It loads the configuration, parses the common URL parameters,
// builds HTTP clients and retryers, classifies SDK errors into driver codes
// (and tells whether a failed write may have been applied), applies the
// DynamoDB response CRC32 rule for local endpoints, and creates DynamoDB
// tables and waits for them.
package awsconf

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	//lint:ignore SA1019 otelaws is deprecated upstream for smithy-go's smithyoteltracing, which the module proxy this project uses does not serve; otelaws still works with this SDK (TestAWSSpansAreChildren)
	"go.opentelemetry.io/contrib/instrumentation/github.com/aws/aws-sdk-go-v2/otelaws"

	"nameservice.dev/nameservice/internal/telemetry"
)

// Load returns the configuration of the SDK's default chain (environment,
// shared files, instance metadata) with region, profile and creds applied
// when they are set, and defaultRegion when no region resolves ("" leaves it
// unset). Its error is the SDK's; callers wrap it with their own context.
func Load(ctx context.Context, region, profile string, creds aws.CredentialsProvider, defaultRegion string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	if creds != nil {
		opts = append(opts, config.WithCredentialsProvider(creds))
	}
	c, err := config.LoadDefaultConfig(ctx, opts...)
	if err == nil && c.Region == "" {
		c.Region = defaultRegion
	}
	// The SDK's spans, as children of an instrumented driver call; nothing
	// is traced for a call that is not (see telemetry.FollowContext).
	otelaws.AppendMiddlewares(&c.APIOptions, otelaws.WithTracerProvider(telemetry.FollowContext()))
	return c, err
}
