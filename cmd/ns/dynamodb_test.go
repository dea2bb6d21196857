package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/testenv"
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
