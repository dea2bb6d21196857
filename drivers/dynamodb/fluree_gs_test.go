package dynamodb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// publishGraphSource is GraphSourcePublisher::publish_graph_source: one
// TransactWriteItems of four Updates without conditions, the meta item's
// source_type being GraphSourceType::to_type_string ("f:Bm25Index").
func (f fluree) publishGraphSource(ctx context.Context, name, branch, sourceType, config string, deps []string) error {
	pk, now := name+":"+branch, now()
	l := make([]types.AttributeValue, len(deps))
	for i, d := range deps {
		l[i] = s(d)
	}
	update := func(sk, expr string, names map[string]string, vals map[string]types.AttributeValue) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{TableName: aws.String(f.table), Key: f.key(pk, sk),
			UpdateExpression: aws.String(expr), ExpressionAttributeNames: names, ExpressionAttributeValues: vals}}
	}
	_, err := f.c.TransactWriteItems(ctx, &awsdynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		update("meta", "SET #kind = :gs, #st = :src_type, #name = :name, #br = :branch, #deps = :deps, #ret = if_not_exists(#ret, :false_val), #ua = :now, #schema = :sv",
			map[string]string{"#kind": "kind", "#st": "source_type", "#name": "name", "#br": "branch", "#deps": "dependencies", "#ret": "retracted", "#ua": "updated_at_ms", "#schema": "schema"},
			map[string]types.AttributeValue{":gs": s("graph_source"), ":src_type": s(sourceType), ":name": s(name), ":branch": s(branch),
				":deps": &types.AttributeValueMemberL{Value: l}, ":false_val": &types.AttributeValueMemberBOOL{Value: false}, ":now": now, ":sv": n(2)}),
		update("config", "SET #cj = :cfg, #cv = if_not_exists(#cv, :zero) + :one, #ua = :now",
			map[string]string{"#cj": "config_json", "#cv": "config_v", "#ua": "updated_at_ms"},
			map[string]types.AttributeValue{":cfg": s(config), ":zero": n(0), ":one": n(1), ":now": now}),
		update("index", "SET #it = if_not_exists(#it, :zero), #ua = if_not_exists(#ua, :now)",
			map[string]string{"#it": "index_t", "#ua": "updated_at_ms"}, map[string]types.AttributeValue{":zero": n(0), ":now": now}),
		update("status", "SET #st = if_not_exists(#st, :ready), #sv = if_not_exists(#sv, :one), #ua = if_not_exists(#ua, :now)",
			map[string]string{"#st": "status", "#sv": "status_v", "#ua": "updated_at_ms"},
			map[string]types.AttributeValue{":ready": s("ready"), ":one": n(1), ":now": now}),
	}})
	return err
}

// flureeSourceTypes is GraphSourceType::from_type_string: the types Fluree
// knows, in the forms it reads; any other string is Unknown.
var flureeSourceTypes = map[string]string{
	"f:Bm25Index": "Bm25", "f:HnswIndex": "Vector", "f:GeoIndex": "Geo", "f:R2rmlMapping": "R2rml", "f:IcebergMapping": "Iceberg",
	"https://ns.flur.ee/db#Bm25Index": "Bm25", "https://ns.flur.ee/db#HnswIndex": "Vector", "https://ns.flur.ee/db#GeoIndex": "Geo",
	"https://ns.flur.ee/db#R2rmlMapping": "R2rml", "https://ns.flur.ee/db#IcebergMapping": "Iceberg",
}

// TestFlureeGraphSourceType: a graph source's type is one thing to both
// sides. Fluree writes and reads the meta item's source_type in its own
// form ("f:Bm25Index"); the model's is "db:Bm25Index", as the ns@v2 reader
// gives it. A graph source published here is of a type Fluree knows, one
// Fluree published reads here as the same graph source read from files,
// and a listing by type finds both (and one stored by an earlier version).
func TestFlureeGraphSourceType(t *testing.T) {
	for _, indexed := range []bool{true, false} {
		t.Run(fmt.Sprintf("indexed=%v", indexed), func(t *testing.T) {
			cfg, _ := ownTable(t, indexed)
			d := openWith(t, cfg)
			testFlureeGraphSourceType(t, d, fluree{c: d.Client(), table: d.Table()})
		})
	}
}

func testFlureeGraphSourceType(t *testing.T, d *dynamodb.Driver, fl fluree) {
	ns := nameservice.New(d)
	ctx := context.Background()
	p := "gstype" + testenv.RandomHex(4) + "/"
	must(t, ns.PublishGraphSource(ctx, p+"ours:main", "db:Bm25Index", []string{p + "db:main"}, map[string]any{"k1": 1.2}))
	out, err := fl.c.GetItem(ctx, &awsdynamodb.GetItemInput{TableName: aws.String(fl.table), Key: fl.key(p+"ours:main", "meta"), ConsistentRead: aws.Bool(true)})
	must(t, err)
	st, _ := out.Item["source_type"].(*types.AttributeValueMemberS)
	if st == nil || flureeSourceTypes[st.Value] != "Bm25" {
		t.Errorf("Fluree reads the type of our graph source from source_type %v: not Bm25", out.Item["source_type"])
	}

	must(t, fl.publishGraphSource(ctx, p+"theirs", "main", "f:Bm25Index", `{"k1":1.2}`, []string{p + "db:main"}))
	rec, err := ns.Lookup(ctx, p+"theirs:main")
	must(t, err)
	if rec.SourceType != "db:Bm25Index" {
		t.Errorf("we read the source type of Fluree's graph source as %q, want db:Bm25Index", rec.SourceType)
	}
	// An item of an earlier version of this driver, which stored the
	// model's form.
	must(t, fl.publishGraphSource(ctx, p+"old", "main", "db:Bm25Index", `{}`, nil))
	var got []string
	for r, err := range ns.List(ctx, nameservice.ListOptions{Prefix: p, SourceType: "db:Bm25Index"}) {
		must(t, err)
		got = append(got, r.ID.String())
	}
	if want := []string{p + "old:main", p + "ours:main", p + "theirs:main"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listing by type db:Bm25Index: %v, want %v", got, want)
	}
	// Publishing the graph source again, as this project names its type,
	// is an update of the same graph source.
	must(t, ns.PublishGraphSource(ctx, p+"theirs:main", "db:Bm25Index", []string{p + "db:main"}, map[string]any{"k1": 1.5}))
	if rec, err = ns.Lookup(ctx, p+"theirs:main"); err != nil || rec.Config.V != 2 {
		t.Errorf("after our publish over Fluree's: %v, %v", rec, err)
	}
}
