// Package testenv gives tests the endpoints of the real servers they run
// against, as started by scripts/test.sh (via scripts/testservers.sh).
//
// Environment variables:
//
//	NAMESERVICE_TEST_DYNAMODB_ENDPOINT  DynamoDB Local, e.g. http://127.0.0.1:8000
//	NAMESERVICE_TEST_DYNAMODB2_ENDPOINT a second one (optional): each test process
//	                                    uses one of the two (DynamoDBEndpoint)
//	NAMESERVICE_TEST_S3_ENDPOINT        versitygw (S3 API, path style), e.g. http://127.0.0.1:7070
//	NAMESERVICE_TEST_GCS_ENDPOINT       fake-gcs-server (GCS JSON API), e.g. http://127.0.0.1:4443
//	NAMESERVICE_TEST_AZURE_ENDPOINT     Azurite's blob service, e.g. http://127.0.0.1:10000
//	                                    (account devstoreaccount1 with Azurite's well-known key)
//	AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION
//	                                    the S3 server's credentials, which DynamoDB Local
//	                                    accepts too (one database per access key: every
//	                                    client of a test must use the same)
//	CI                                  when non-empty, a missing endpoint fails the
//	                                    test instead of skipping it
//
// scripts/test.sh starts the servers (scripts/testservers.sh start; eval
// "$(scripts/testservers.sh env)" exports the variables). One server serves
// the whole run, so each test must use its own table, bucket or key prefix.
package testenv

import (
	"net/url"
	"os"
	"testing"
)

// Names of the environment variables holding the server endpoints.
const (
	DynamoDBEndpointEnv = "NAMESERVICE_TEST_DYNAMODB_ENDPOINT"
	S3EndpointEnv       = "NAMESERVICE_TEST_S3_ENDPOINT"
	GCSEndpointEnv      = "NAMESERVICE_TEST_GCS_ENDPOINT"
	AzureEndpointEnv    = "NAMESERVICE_TEST_AZURE_ENDPOINT"
)

// Required reports whether the test servers are mandatory (CI is set).
func Required() bool { return os.Getenv("CI") != "" }

// The endpoints of the test servers, each from its variable above. When it
// is unset the test is skipped, or fails when [Required].
var (
	S3Endpoint    = endpointOf(S3EndpointEnv, "S3 (versitygw)")
	GCSEndpoint   = endpointOf(GCSEndpointEnv, "GCS (fake-gcs-server)")
	AzureEndpoint = endpointOf(AzureEndpointEnv, "Azure Blob (Azurite)")
)

func endpointOf(env, server string) func(testing.TB) string {
	return func(t testing.TB) string {
		t.Helper()
		return endpoint(t, env, server)
	}
}

func endpoint(t testing.TB, env, server string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		const hint = "%s is not set: the %s test server is required in CI; run the tests with scripts/test.sh (or eval \"$(scripts/testservers.sh env)\" after scripts/testservers.sh start)"
		if Required() {
			t.Fatalf(hint, env, server)
		} else {
			t.Skipf(hint, env, server)
		}
		return ""
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Fatalf("%s=%q is not an http(s)://host:port URL", env, v)
		return ""
	}
	return v
}

// Must fails the test on err.
func Must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
