package docstore

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"nameservice.dev/nameservice/driver"
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

// TestDroppedTable: a table deleted under open clients is NotProvisioned
// for every operation, saying to create it, never a record that is not
// found or a write whose outcome is unknown.
func TestDroppedTable(t *testing.T) {
	ctx := context.Background()
	u := ownTable(t)
	d, err := openURL(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id := model.ID{Name: "db", Branch: "main"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.table.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(d.table.name)}); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"get": func() error { _, err := d.Get(ctx, id); return err }(),
		"push": func() error {
			_, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c", 1))
			return err
		}(),
		"create": d.Create(ctx, model.NewLedger(model.ID{Name: "other", Branch: "main"}, 1)),
		"list":   func() error { _, err := d.List(ctx, driver.ListOptions{}); return err }(),
	} {
		if !errors.Is(err, model.ErrNotProvisioned) || !strings.Contains(err.Error(), "ns table create") || errors.Is(err, model.ErrOutcomeUnknown) {
			t.Errorf("%s on a dropped table: %v (code %v), want NotProvisioned saying `ns table create`", what, err, model.Code(err))
		}
	}
}
