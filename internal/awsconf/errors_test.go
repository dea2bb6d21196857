package awsconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/aws/smithy-go"

	"nameservice.dev/nameservice/model"
)

func TestCode(t *testing.T) {
	cases := map[string]model.ErrorCode{
		"ResourceNotFoundException":              model.NotProvisioned,
		"NoSuchBucket":                           model.NotProvisioned,
		"AccessDeniedException":                  model.PermissionDenied,
		"AccessDenied":                           model.PermissionDenied,
		"SignatureDoesNotMatch":                  model.PermissionDenied,
		"UnrecognizedClientException":            model.PermissionDenied,
		"ProvisionedThroughputExceededException": model.Throttled,
		"SlowDown":                               model.Throttled,
		"InternalServerError":                    model.Unavailable,
	}
	for code, want := range cases {
		err := fmt.Errorf("op: %w", &smithy.GenericAPIError{Code: code})
		if got := Code(err); got != want {
			t.Errorf("Code(%s) = %v, want %v", code, got, want)
		}
		if got := model.Code(fmt.Errorf("%w", Sentinel(err))); got != want {
			t.Errorf("Sentinel(%s) has code %v, want %v", code, got, want)
		}
	}
	if got := Code(errors.New("connection reset")); got != model.Unavailable {
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
	u, _ := url.Parse("dynamodb://t?region=eu-west-1&endpoint=http://h:1&profile=p&timeout=3s&max_attempts=4")
	p, err := ParseParams(u, ParamNames)
	if err != nil || p.Region != "eu-west-1" || p.Endpoint != "http://h:1" || p.Profile != "p" || p.Timeout.Seconds() != 3 || p.MaxAttempts != 4 {
		t.Fatalf("ParseParams = %+v, %v", p, err)
	}
	for _, bad := range []string{"x://t?timeout=-1s", "x://t?timeout=soon", "x://t?max_attempts=0", "x://t?colour=red", "x://key:secret@t"} {
		u, _ := url.Parse(bad)
		if _, err := ParseParams(u, ParamNames); err == nil {
			t.Errorf("ParseParams(%s) accepted", bad)
		}
	}
}
