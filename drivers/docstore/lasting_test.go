package docstore

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/testenv"
)

// TestMissingTable checks, against DynamoDB Local, that opening a
// docstore+dynamodb URL whose table does not exist is NotProvisioned and
// says to run `ns table create`. The URL has no disable_response_crc32: the
// check is off for a local endpoint anyway, as for every DynamoDB client.
func TestMissingTable(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	u := "docstore+dynamodb://no-such-table-" + testenv.RandomHex(4) + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	_, err := Open(context.Background(), u)
	if !errors.Is(err, driver.ErrNotProvisioned) || !strings.Contains(err.Error(), "ns table create") {
		t.Fatalf("open on a missing table: %v (code %v), want NotProvisioned saying `ns table create`", err, driver.Code(err))
	}
}
