package docstore

import (
	"context"
	"fmt"
	"net/url"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/docstore"
	dsdynamodb "gocloud.dev/docstore/awsdynamodb/v2"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/awsconf"
)

// ParamNoCRC32 is this driver's own query parameter of docstore+dynamodb
// URLs: "disable_response_crc32=true" turns off the DynamoDB client's CRC32
// check of responses, which DynamoDB Local's error responses fail (the SDK
// then logs a warning for each and drops the connection). Without it the
// check is off exactly when the endpoint is not AWS's own (an endpoint
// parameter, or AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL set), as for
// every DynamoDB client of this module. gocloud's URL opener cannot set it,
// so then the driver builds the client itself, reading every other
// parameter as gocloud does.
const ParamNoCRC32 = "disable_response_crc32"

// needsOwnDynamoDB reports whether u (prefix stripped, defaults filled) asks
// for a client option gocloud's URL opener cannot set.
func needsOwnDynamoDB(u *url.URL) bool {
	q := u.Query()
	return u.Scheme == "dynamodb" && (q.Has(ParamNoCRC32) || awsconf.LocalDynamoDB(q.Get("endpoint")))
}

// openDynamoDB opens the collection of u as awsdynamodb's URL opener would,
// with the client's response CRC32 check as ParamNoCRC32 says.
func openDynamoDB(ctx context.Context, u *url.URL) (*docstore.Collection, error) {
	q := u.Query()
	noCRC := q.Get(ParamNoCRC32) == "true" || !q.Has(ParamNoCRC32) && awsconf.LocalDynamoDB(q.Get("endpoint"))
	opts := &dsdynamodb.Options{
		AllowScans:     q.Get("allow_scans") == "true",
		RevisionField:  q.Get("revision_field"),
		ConsistentRead: q.Get("consistent_read") == "true",
	}
	pk, sk := q.Get("partition_key"), q.Get("sort_key")
	for _, k := range []string{ParamNoCRC32, "allow_scans", "revision_field", "consistent_read", "partition_key", "sort_key"} {
		q.Del(k)
	}
	if u.Host == "" || u.Path != "" {
		return nil, fmt.Errorf("%w: docstore+dynamodb://TABLE takes the table as host and no path", driver.ErrInvalidArgument)
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", driver.ErrInvalidArgument, err)
	}
	client := awsdynamodb.NewFromConfig(cfg, func(o *awsdynamodb.Options) { o.DisableValidateResponseChecksum = noCRC })
	return dsdynamodb.OpenCollection(client, u.Host, pk, sk, opts)
}
