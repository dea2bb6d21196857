package dynamodb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

func rawItem(t *testing.T, d *dynamodb.Driver, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := d.Client().GetItem(context.Background(), &awsdynamodb.GetItemInput{TableName: aws.String(d.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk)}})
	must(t, err)
	return out.Item
}

func attr(it map[string]types.AttributeValue, name string) string {
	switch v := it[name].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case nil:
		return "<absent>"
	}
	return "<other>"
}

// TestBranchAttributesAreFlurees reads, with the SDK, the meta items a
// branch create writes: Fluree's bp_source, bp_commit_id and bp_t on the
// branch, branches on the source, and no source_branch.
func TestBranchAttributesAreFlurees(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	ns := nameservice.New(d)
	p := "bpa" + testenv.RandomHex(3) + "/"
	must(t, ns.Init(ctx, p+"db"))
	_, err := ns.PublishCommit(ctx, p+"db", 7, "c7")
	must(t, err)
	_, err = ns.CreateBranch(ctx, p+"db:dev", nameservice.BranchOptions{})
	must(t, err)
	_, err = ns.CreateBranch(ctx, p+"db:old", nameservice.BranchOptions{At: &nameservice.Ref{Address: "c3", T: 3}})
	must(t, err)

	dev, old, main := rawItem(t, d, p+"db:dev", "meta"), rawItem(t, d, p+"db:old", "meta"), rawItem(t, d, p+"db:main", "meta")
	for _, c := range []struct {
		it         map[string]types.AttributeValue
		name, want string
	}{
		{dev, "bp_source", "main"}, {dev, "bp_commit_id", "<absent>"}, {dev, "bp_t", "<absent>"}, {dev, "source_branch", "<absent>"},
		{old, "bp_source", "main"}, {old, "bp_commit_id", "c3"}, {old, "bp_t", "3"},
		{main, "branches", "2"}, {main, "bp_source", "<absent>"},
	} {
		if got := attr(c.it, c.name); got != c.want {
			t.Errorf("%s of %s = %s, want %s", c.name, attr(c.it, "pk"), got, c.want)
		}
	}
}

// TestFlureeBranchItemsRead puts the items of a branch exactly as Fluree's
// DynamoDB create_branch writes them (bp_source, commit_id, no address
// attributes) and reads them through the driver; a source whose count
// Fluree's drop took below 0 reads as 0, and dropping the branch leaves it
// there.
func TestFlureeBranchItemsRead(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	p := "fbr" + testenv.RandomHex(3) + "/"
	put := func(pk, sk string, attrs map[string]types.AttributeValue) {
		it := map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk), "updated_at_ms": n(1705312200123), "schema": n(2)}
		for k, v := range attrs {
			it[k] = v
		}
		_, err := d.Client().PutItem(ctx, &awsdynamodb.PutItemInput{TableName: aws.String(d.Table()), Item: it})
		must(t, err)
	}
	record := func(branch string, meta map[string]types.AttributeValue) {
		pk := p + "db:" + branch
		meta["kind"], meta["name"], meta["branch"] = s("ledger"), s(p+"db"), s(branch)
		meta["retracted"] = &types.AttributeValueMemberBOOL{Value: false}
		put(pk, "meta", meta)
		put(pk, "head", map[string]types.AttributeValue{"commit_id": s("bagcid9"), "commit_t": n(9)})
		put(pk, "index", map[string]types.AttributeValue{"index_t": n(0)})
		put(pk, "status", map[string]types.AttributeValue{"status": s("ready"), "status_v": n(1)})
		put(pk, "config", map[string]types.AttributeValue{"config_v": n(0)})
	}
	record("main", map[string]types.AttributeValue{"branches": n(-1)})
	record("feature-x", map[string]types.AttributeValue{"bp_source": s("main")})

	id, _ := model.ParseID(p + "db:feature-x")
	rec, err := d.Get(ctx, id)
	must(t, err)
	if rec.SourceBranch != "main" || rec.BranchPoint != nil || !rec.Head.Equal(model.RefValue("bagcid9", 9)) {
		t.Fatalf("Fluree's branch read as %+v head %v", rec.Meta, *rec.Head)
	}
	mainID, _ := model.ParseID(p + "db")
	if m, err := d.Get(ctx, mainID); err != nil || m.Branches != 0 {
		t.Fatalf("source with branches -1: %v, branches %v", err, m)
	}
	must(t, d.DropBranch(ctx, id))
	if got := attr(rawItem(t, d, p+"db:main", "meta"), "branches"); got != "-1" {
		t.Fatalf("a drop changed a count below 0 to %s; it must not decrement it further", got)
	}
	// A branch created from it counts as one: the count below 0 is none.
	ns := nameservice.New(d)
	_, err = ns.CreateBranch(ctx, p+"db:dev", nameservice.BranchOptions{})
	must(t, err)
	if m, err := d.Get(ctx, mainID); err != nil || m.Branches != 1 {
		t.Fatalf("source with branches -1 after a branch was created from it: %v, branches %v; want 1", err, m)
	}
	if err := ns.DropBranch(ctx, p+"db"); !errors.Is(err, nameservice.ErrHasBranches) {
		t.Fatalf("drop of a source with a branch: %v, want ErrHasBranches", err)
	}
}

// TestMigrateBranchAttributes writes a branch as earlier versions of this
// driver did (source_branch), reads it, and checks that the migration
// renames the attribute to bp_source, once.
func TestMigrateBranchAttributes(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	p := "mig" + testenv.RandomHex(3) + "/"
	ns := nameservice.New(d)
	must(t, ns.Init(ctx, p+"db"))
	_, err := ns.PublishCommit(ctx, p+"db", 1, "c1")
	must(t, err)
	_, err = ns.CreateBranch(ctx, p+"db:dev", nameservice.BranchOptions{})
	must(t, err)
	_, err = d.Client().UpdateItem(ctx, &awsdynamodb.UpdateItemInput{TableName: aws.String(d.Table()),
		Key:              map[string]types.AttributeValue{"pk": s(p + "db:dev"), "sk": s("meta")},
		UpdateExpression: aws.String("SET source_branch = bp_source REMOVE bp_source")})
	must(t, err)
	rec, err := ns.Lookup(ctx, p+"db:dev")
	must(t, err)
	if rec.SourceBranch != "main" {
		t.Fatalf("source_branch of an earlier version read as %q", rec.SourceBranch)
	}
	changed, err := d.MigrateBranchAttributes(ctx)
	must(t, err)
	if changed < 1 {
		t.Fatalf("migration changed %d items, want at least the one written with source_branch", changed)
	}
	it := rawItem(t, d, p+"db:dev", "meta")
	if attr(it, "bp_source") != "main" || attr(it, "source_branch") != "<absent>" {
		t.Fatalf("after migration: bp_source %s, source_branch %s", attr(it, "bp_source"), attr(it, "source_branch"))
	}
	if changed, err = d.MigrateBranchAttributes(ctx); err != nil || changed != 0 {
		t.Fatalf("second migration changed %d (%v), want 0", changed, err)
	}
	if err := ns.DropBranch(ctx, p+"db"); !errors.Is(err, nameservice.ErrHasBranches) {
		t.Fatalf("drop of the migrated branch's source: %v, want ErrHasBranches", err)
	}
}
