package awsconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

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
		if got := model.Code(fmt.Errorf("%w", Code(err).Sentinel())); got != want {
			t.Errorf("Code(%s).Sentinel() has code %v, want %v", code, got, want)
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
		{answered(500, errors.New("internal error")), true},
		{answered(400, &smithy.GenericAPIError{Code: "ValidationException"}), false},
		// A 200 whose body broke off: the write was processed.
		{answered(200, &smithy.DeserializationError{Err: &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}}), true},
	}
	for _, c := range cases {
		if got := MaybeApplied(c.err); got != c.want {
			t.Errorf("MaybeApplied(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// answered wraps err as the SDK does an error that came with an HTTP answer
// of that status.
func answered(status int, err error) error {
	resp := &smithyhttp.Response{Response: &http.Response{StatusCode: status}}
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{Response: resp, Err: err}}
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
