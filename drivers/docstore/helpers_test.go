package docstore

import (
	"context"
	"testing"

	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// stores runs fn on a memdocstore collection and on DynamoDB Local: the
// run's table, or with own a table of the test's own.
func stores(t *testing.T, own bool, fn func(t *testing.T, open func() *Driver)) {
	dynamo := func(t *testing.T) string { return dynamoURL(t) }
	if own {
		dynamo = ownTable
	}
	for _, s := range []struct {
		name string
		url  func(t *testing.T) string
	}{{"mem", memURL}, {"dynamodb", dynamo}} {
		t.Run(s.name, func(t *testing.T) {
			u := s.url(t)
			fn(t, func() *Driver {
				d, err := openURL(context.Background(), u)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close() })
				return d
			})
		})
	}
}

func testID(t *testing.T) model.ID {
	id, err := model.ParseID("proto" + testenv.RandomHex(4) + "/db")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// rawGet reads the document of key behind the driver's back: its bytes,
// nil when it is absent.
func rawGet(ctx context.Context, d *Driver, key string) ([]byte, error) {
	data, _, err := store{d}.Get(ctx, key)
	return data, err
}

// rawPut writes the document of key unconditionally, behind the driver's
// back (its cache does not see it).
func rawPut(ctx context.Context, d *Driver, key string, data []byte) error {
	_, err := store{d}.Put(ctx, key, data, objstore.Precondition{})
	return err
}

// ownTable provisions a DynamoDB table of the test's own, dropped when it
// ends, and returns its URL.
func ownTable(t *testing.T) string {
	ctx := context.Background()
	u := tableURL("nsdoc-own-"+testenv.RandomHex(4), testenv.DynamoDBEndpoint(t))
	d, err := openURL(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.DropTable(t, d.table.client, d.table.name)
	return u
}
