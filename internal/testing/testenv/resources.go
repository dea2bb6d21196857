package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/internal/awsconf"
)

// Credentials are the AWS credentials of the test servers, read from
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when a
// request is signed, so the S3 tests run against any S3-compatible server.
var Credentials aws.CredentialsProvider = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"),
		os.Getenv("AWS_SESSION_TOKEN")).Retrieve(context.Background())
})

// RandomHex returns n random bytes in hex, for names of a test's own.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// S3Bucket creates a bucket named prefix + random hex through client and
// removes it, with its objects, when the test ends.
func S3Bucket(t testing.TB, client *s3.Client, prefix string) string {
	t.Helper()
	bucket := prefix + RandomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		awsconf.RemoveBucket(ctx, client, bucket)
	})
	return bucket
}

// DropTable deletes the DynamoDB table name when the test ends.
func DropTable(t testing.TB, client *awsdynamodb.Client, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = client.DeleteTable(ctx, &awsdynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
}
