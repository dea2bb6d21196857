package awsconf

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestLoadAppliesSettingsAndDefaultRegion(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	ctx := context.Background()
	creds := credentials.NewStaticCredentialsProvider("id", "secret", "")
	c, err := Load(ctx, "eu-west-1", "", creds, "us-east-1")
	if err != nil || c.Region != "eu-west-1" {
		t.Fatalf("Load with a region = %q, %v", c.Region, err)
	}
	got, err := c.Credentials.Retrieve(ctx)
	if err != nil || got.AccessKeyID != "id" {
		t.Fatalf("credentials = %+v, %v", got, err)
	}
	if c, err := Load(ctx, "", "", creds, "us-east-1"); err != nil || c.Region != "us-east-1" {
		t.Fatalf("Load without a region = %q, %v; want the default", c.Region, err)
	}
	if c, err := Load(ctx, "", "", creds, ""); err != nil || c.Region != "" {
		t.Fatalf("Load without a region or default = %q, %v", c.Region, err)
	}
}
