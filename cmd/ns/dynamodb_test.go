package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// TestAgainstDynamoDBLocal runs the CLI end to end on a table it creates.
func TestAgainstDynamoDBLocal(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	c := &cli{t: t, url: "dynamodb://ns-cli-" + hex.EncodeToString(b) + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)}
	if code, _, errs := c.run("init", "mydb"); code != exitNotProvisioned || !strings.Contains(errs, "ns table create") {
		t.Fatalf("init before the table exists: exit %d, stderr %q; want exit %d (not provisioned) and a hint to run ns table create", code, errs, exitNotProvisioned)
	}
	c.want(exitOK, "table", "create")
	c.want(exitOK, "table", "create") // idempotent
	c.want(exitOK, "init", "mydb")
	c.want(exitOK, "publish-commit", "mydb", "3", "c3")
	c.want(exitNotApplied, "publish-commit", "mydb", "2", "c2")
	if out := c.want(exitOK, "lookup", "mydb", "--json"); !strings.Contains(out, `"head":{"v":3,"payload":{"address":"c3","t":3}}`) {
		t.Fatalf("lookup = %s", out)
	}
}

// TestTableCreateDocstore runs `ns table create` on a docstore+dynamodb URL
// whose table does not exist: before it every command is not provisioned,
// after it (twice: idempotent) the CLI works.
func TestTableCreateDocstore(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	table := "ns-cli-doc-" + testenv.RandomHex(4)
	c := &cli{t: t, url: "docstore+dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)}
	if code, _, errs := c.run("init", "mydb"); code != exitNotProvisioned || !strings.Contains(errs, "ns table create") {
		t.Fatalf("init before the table exists: exit %d, stderr %q; want exit %d and a hint to run ns table create", code, errs, exitNotProvisioned)
	}
	c.want(exitOK, "table", "create")
	c.want(exitOK, "table", "create")
	c.want(exitOK, "init", "mydb")
	if out := c.want(exitOK, "lookup", "mydb", "--json"); !strings.Contains(out, `"id":"mydb:main"`) {
		t.Fatalf("lookup = %s", out)
	}
}

// TestBranchAgainstDynamoDBLocal: `ns branch create` writes Fluree's
// bp_source (and bp_commit_id, bp_t at a commit) on the meta item, read here
// with the SDK, not through the driver; an item written with bp_source as
// Fluree writes it reads back as the source branch; `ns table
// migrate-branches` renames an earlier version's source_branch.
func TestBranchAgainstDynamoDBLocal(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	table := "ns-cli-br-" + testenv.RandomHex(4)
	c := &cli{t: t, url: "dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)}
	c.want(exitOK, "table", "create")
	c.want(exitOK, "init", "mydb")
	c.want(exitOK, "publish-commit", "mydb", "3", "c3")
	c.want(exitOK, "branch", "create", "mydb:dev")
	c.want(exitOK, "branch", "create", "mydb:old", "--at", "c2@2")

	ctx := context.Background()
	ns, err := nameservice.Open(ctx, c.url)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	var d *dynamodb.Driver
	if !ns.As(&d) {
		t.Fatal("not a DynamoDB driver")
	}
	client := d.Client()
	meta := func(pk string) map[string]types.AttributeValue {
		out, err := client.GetItem(ctx, &awsdynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "meta"}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	str := func(it map[string]types.AttributeValue, name string) string {
		switch v := it[name].(type) {
		case *types.AttributeValueMemberS:
			return v.Value
		case *types.AttributeValueMemberN:
			return v.Value
		}
		return ""
	}
	dev, old, main := meta("mydb:dev"), meta("mydb:old"), meta("mydb:main")
	if str(dev, "bp_source") != "main" || str(old, "bp_source") != "main" || str(old, "bp_commit_id") != "c2" || str(old, "bp_t") != "2" || str(main, "branches") != "2" {
		t.Fatalf("meta items: dev %v, old %v, main %v", dev, old, main)
	}
	if _, has := dev["source_branch"]; has {
		t.Fatalf("dev still carries source_branch: %v", dev)
	}

	// A branch as Fluree's create_branch writes it: bp_source, commit_id.
	put := func(sk string, attrs map[string]types.AttributeValue) {
		attrs["pk"], attrs["sk"] = &types.AttributeValueMemberS{Value: "mydb:flu"}, &types.AttributeValueMemberS{Value: sk}
		attrs["schema"], attrs["updated_at_ms"] = &types.AttributeValueMemberN{Value: "2"}, &types.AttributeValueMemberN{Value: "1705312200123"}
		if _, err := client.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: aws.String(table), Item: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	s, n := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }, func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	put("meta", map[string]types.AttributeValue{"kind": s("ledger"), "name": s("mydb"), "branch": s("flu"), "retracted": &types.AttributeValueMemberBOOL{Value: false}, "bp_source": s("dev")})
	put("head", map[string]types.AttributeValue{"commit_id": s("bagcid3"), "commit_t": n("3")})
	put("index", map[string]types.AttributeValue{"index_t": n("0")})
	put("status", map[string]types.AttributeValue{"status": s("ready"), "status_v": n("1")})
	put("config", map[string]types.AttributeValue{"config_v": n("0")})
	if out := c.want(exitOK, "lookup", "mydb:flu", "--json"); !strings.Contains(out, `"source_branch":"dev"`) {
		t.Fatalf("Fluree's branch item read as %s", out)
	}

	// An item an earlier version wrote: source_branch.
	if _, err := client.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{TableName: aws.String(table),
		Key:              map[string]types.AttributeValue{"pk": s("mydb:dev"), "sk": s("meta")},
		UpdateExpression: aws.String("SET source_branch = bp_source REMOVE bp_source")}); err != nil {
		t.Fatal(err)
	}
	if out := c.want(exitOK, "table", "migrate-branches"); out != "migrated 1 meta item(s) from source_branch to bp_source\n" {
		t.Fatalf("migrate-branches: %q", out)
	}
	if dev = meta("mydb:dev"); str(dev, "bp_source") != "main" {
		t.Fatalf("after migration: %v", dev)
	}
}

// TestTableIndexes: `ns table create --indexes` makes a table with the
// optional indexes, `ns table upgrade` adds them to a table without (and
// says so), and `ns list --state` lists through either.
func TestTableIndexes(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	for _, create := range [][]string{{"table", "create", "--indexes"}, {"table", "create"}} {
		table := "ns-cli-ix-" + testenv.RandomHex(4)
		c := &cli{t: t, url: "dynamodb://" + table + "?region=us-east-1&endpoint=" + url.QueryEscape(endpoint)}
		out := c.want(exitOK, create...)
		t.Cleanup(func() { deleteTable(t, c.url, table) })
		c.want(exitOK, "init", "a")
		c.want(exitOK, "init", "b")
		c.want(exitOK, "push-status", "b", "--expect-v", "1", "indexing")
		up := c.want(exitOK, "table", "upgrade", "--json")
		indexed := len(create) == 3
		if indexed && (!strings.Contains(out, "state-index, source-type-index") || strings.TrimSpace(up) != `{"added":null,"backfilled":0}`) {
			t.Fatalf("create --indexes printed %q, then upgrade %q", out, up)
		}
		if !indexed && strings.TrimSpace(up) != `{"added":["state-index","source-type-index"],"backfilled":0}` {
			t.Fatalf("upgrade of a table without the indexes printed %q", up)
		}
		var got string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if got = c.want(exitOK, "list", "--state", "indexing", "--kind", "ledger", "--json"); strings.Contains(got, `"id":"b:main"`) {
				break
			}
		}
		if strings.Count(got, "\n") != 1 || !strings.Contains(got, `"id":"b:main"`) {
			t.Fatalf("ns list --state indexing --kind ledger = %q", got)
		}
	}
}

func deleteTable(t *testing.T, rawURL, table string) {
	ns, err := nameservice.Open(context.Background(), rawURL)
	if err != nil {
		t.Error(err)
		return
	}
	defer ns.Close()
	var d *dynamodb.Driver
	if !ns.As(&d) {
		t.Error("not a DynamoDB driver")
		return
	}
	_, _ = d.Client().DeleteTable(context.Background(), &awsdynamodb.DeleteTableInput{TableName: aws.String(table)})
}
