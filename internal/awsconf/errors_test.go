package awsconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/aws/smithy-go"

	"nameservice.dev/nameservice/driver"
)

func TestCode(t *testing.T) {
	cases := map[string]driver.ErrorCode{
		"ResourceNotFoundException":              driver.NotProvisioned,
		"NoSuchBucket":                           driver.NotProvisioned,
		"AccessDeniedException":                  driver.PermissionDenied,
		"AccessDenied":                           driver.PermissionDenied,
		"SignatureDoesNotMatch":                  driver.PermissionDenied,
		"UnrecognizedClientException":            driver.PermissionDenied,
		"ProvisionedThroughputExceededException": driver.Throttled,
		"SlowDown":                               driver.Throttled,
		"InternalServerError":                    driver.Unavailable,
	}
	for code, want := range cases {
		err := fmt.Errorf("op: %w", &smithy.GenericAPIError{Code: code})
		if got := Code(err); got != want {
			t.Errorf("Code(%s) = %v, want %v", code, got, want)
		}
		if got := driver.Code(fmt.Errorf("%w", Sentinel(err))); got != want {
			t.Errorf("Sentinel(%s) has code %v, want %v", code, got, want)
		}
	}
	if got := Code(errors.New("connection reset")); got != driver.Unavailable {
		t.Errorf("Code(no API error) = %v, want Unavailable", got)
	}
}

func TestMaybeApplied(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{errors.New("read: connection reset by peer"), true},
		{&smithy.GenericAPIError{Code: "ConditionalCheckFailedException"}, false},
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, false},
		{context.Canceled, false},
	}
	for _, c := range cases {
		if got := MaybeApplied(c.err); got != c.want {
			t.Errorf("MaybeApplied(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestParseParams(t *testing.T) {
	q, _ := url.ParseQuery("region=eu-west-1&endpoint=http://h:1&profile=p&timeout=3s&max_attempts=4")
	p, err := ParseParams(q, ParamNames)
	if err != nil || p.Region != "eu-west-1" || p.Endpoint != "http://h:1" || p.Profile != "p" || p.Timeout.Seconds() != 3 || p.MaxAttempts != 4 {
		t.Fatalf("ParseParams = %+v, %v", p, err)
	}
	for _, bad := range []string{"timeout=-1s", "timeout=soon", "max_attempts=0", "colour=red"} {
		q, _ := url.ParseQuery(bad)
		if _, err := ParseParams(q, ParamNames); err == nil {
			t.Errorf("ParseParams(%s) accepted", bad)
		}
	}
}
