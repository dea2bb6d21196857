package drivers

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

var errOpened = errors.New("opened")

func init() {
	Register("TestScheme", func(_ context.Context, u *url.URL) (driver.Driver, error) {
		return nil, errOpened
	})
}

func TestOpenIsCaseInsensitive(t *testing.T) {
	for _, u := range []string{"testscheme://x", "TESTSCHEME://x", "TestScheme://x"} {
		if _, err := Open(context.Background(), u); !errors.Is(err, errOpened) {
			t.Errorf("Open(%q) = %v, want the registered opener", u, err)
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering a scheme twice did not panic")
		}
	}()
	Register("testscheme", func(context.Context, *url.URL) (driver.Driver, error) { return nil, nil })
}

func TestUnknownSchemeListsRegistered(t *testing.T) {
	_, err := Open(context.Background(), "nosuch://user:hunter2@host/x?secret_key=s3cr3t&region=eu")
	if !errors.Is(err, model.ErrUnsupported) || !strings.Contains(err.Error(), "testscheme") {
		t.Fatalf("error = %v, want ErrUnsupported listing testscheme", err)
	}
	for _, secret := range []string{"hunter2", "s3cr3t"} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error leaks a credential: %v", err)
		}
	}
	if !strings.Contains(err.Error(), "region=eu") {
		t.Fatalf("error drops harmless context: %v", err)
	}
}

func TestMalformedURLHidesCredentials(t *testing.T) {
	for _, u := range []string{"dynamodb://user:hunter2@ho st/%zz", "://hunter2", "no-scheme-hunter2"} {
		_, err := Open(context.Background(), u)
		if !errors.Is(err, model.ErrInvalidArgument) {
			t.Errorf("Open(%q) = %v, want ErrInvalidArgument", u, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") && !strings.HasPrefix(u, "no-scheme") {
			t.Errorf("Open(%q) error leaks the password: %v", u, err)
		}
	}
}

// TestRedactShowsFilePaths: Redact hides a token, a key and a password but
// shows the path a *_file parameter names (a pasted cleanup command must
// work) and docstore's field names.
func TestRedactShowsFilePaths(t *testing.T) {
	u, err := url.Parse("https://u:hunter2@h:1?token_file=%2Fetc%2Fns%2Ftoken&ca_file=ca.pem&token=s3cr3t&partition_key=pk&sort_key=sk&access_key=ak")
	if err != nil {
		t.Fatal(err)
	}
	got := Redact(u)
	for _, want := range []string{"token_file=%2Fetc%2Fns%2Ftoken", "ca_file=ca.pem", "token=REDACTED", "u:REDACTED@", "partition_key=pk", "sort_key=sk", "access_key=REDACTED"} {
		if !strings.Contains(got, want) {
			t.Errorf("Redact = %q, want it to hold %q", got, want)
		}
	}
}

// shapeDriver is a driver of the common shape for TestOpens; only its
// identity matters.
type shapeDriver struct{ driver.Driver }

type shapeConfig struct{ name string }

// TestOpens checks the opener every driver registers: ParseURL's Config
// reaches Open, a ParseURL error stops before Open, and an Open error gives
// a nil driver.Driver, not a nil *Driver inside an interface.
func TestOpens(t *testing.T) {
	ctx := context.Background()
	errParse, errOpen := errors.New("parse"), errors.New("open")
	var opened []string
	parse := func(u *url.URL) (shapeConfig, error) {
		if u.Host == "bad" {
			return shapeConfig{}, errParse
		}
		return shapeConfig{name: u.Host}, nil
	}
	open := func(_ context.Context, c shapeConfig) (*shapeDriver, error) {
		opened = append(opened, c.name)
		if c.name == "fails" {
			return nil, errOpen
		}
		return &shapeDriver{}, nil
	}
	opener := Opens(parse, open)
	if d, err := opener(ctx, &url.URL{Scheme: "x", Host: "ok"}); err != nil || d == nil {
		t.Fatalf("ok: %v %v", d, err)
	}
	if d, err := opener(ctx, &url.URL{Scheme: "x", Host: "bad"}); !errors.Is(err, errParse) || d != nil {
		t.Fatalf("bad: %v %v, want the parse error and no driver", d, err)
	}
	if d, err := opener(ctx, &url.URL{Scheme: "x", Host: "fails"}); !errors.Is(err, errOpen) || d != nil {
		t.Fatalf("fails: %#v %v, want the open error and a nil interface", d, err)
	}
	if strings.Join(opened, ",") != "ok,fails" {
		t.Fatalf("Open saw %v, want ok,fails (never the URL ParseURL refused)", opened)
	}
}
