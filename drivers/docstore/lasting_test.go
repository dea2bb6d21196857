package docstore

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// TestMissingTable checks, against DynamoDB Local, that a docstore+dynamodb
// URL whose table does not exist opens, that every operation is then
// NotProvisioned and says to run `ns table create`, and that Provision
// creates the table (idempotently) and makes the driver usable. The URL has
// no disable_response_crc32: the check is off for a local endpoint anyway,
// as for every DynamoDB client.
func TestMissingTable(t *testing.T) {
	ctx := context.Background()
	endpoint := testenv.DynamoDBEndpoint(t)
	table := "no-such-table-" + testenv.RandomHex(4)
	u := "docstore+dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	d, err := openURL(ctx, u)
	if err != nil {
		t.Fatalf("open on a missing table: %v", err)
	}
	defer d.Close()
	id := model.ID{Name: "db", Branch: "main"}
	_, err = d.Get(ctx, id)
	if !errors.Is(err, model.ErrNotProvisioned) || !strings.Contains(err.Error(), "ns table create") {
		t.Fatalf("get on a missing table: %v (code %v), want NotProvisioned saying `ns table create`", err, model.Code(err))
	}
	for i := range 2 {
		if err := d.Provision(ctx); err != nil {
			t.Fatalf("provision #%d: %v", i+1, err)
		}
	}
	testenv.DropTable(t, d.table.client, table)
	if err := d.Create(ctx, model.NewLedger(id, 0)); err != nil {
		t.Fatalf("create after provision: %v", err)
	}
	other, err := openURL(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Get(ctx, id); err != nil {
		t.Fatalf("a second client reads the provisioned table: %v", err)
	}
}
