package drivers

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/driver"
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
	if !errors.Is(err, driver.ErrUnsupported) || !strings.Contains(err.Error(), "testscheme") {
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
		if !errors.Is(err, driver.ErrInvalidArgument) {
			t.Errorf("Open(%q) = %v, want ErrInvalidArgument", u, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") && !strings.HasPrefix(u, "no-scheme") {
			t.Errorf("Open(%q) error leaks the password: %v", u, err)
		}
	}
}
