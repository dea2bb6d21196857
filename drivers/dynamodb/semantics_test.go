package dynamodb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/resendtest"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

func openDriver(t *testing.T) *dynamodb.Driver {
	t.Helper()
	d, err := dynamodb.Open(context.Background(), testConfig(t))
	must(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func obj(s string) model.Object {
	o, err := model.ParseObject([]byte(s))
	if err != nil {
		panic(err)
	}
	return o
}

// TestEqualsMatchesHolds checks the core promise of the layouts: for every
// stored value and every expected value, the conditional UpdateItem applies
// exactly when driver.Condition.Holds says (the in-memory driver's rule),
// and a rejected push reports the stored value.
func TestEqualsMatchesHolds(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	ref := model.RefValue
	cases := []struct {
		kind   model.Kind
		c      model.Concern
		values []model.Value
		extra  []model.Value // expected values no item can hold
	}{
		{model.Ledger, model.Head,
			[]model.Value{{}, ref("a", 1), ref("b", 1), ref("a", 2), ref(testenv.CID("a"), 1)},
			[]model.Value{{V: 1, Payload: obj(`{"address":"a","t":1,"x":1}`)}, {V: 1}, {V: 0, Payload: obj(`{}`)}}},
		{model.Ledger, model.Status,
			[]model.Value{model.ReadyStatus(), {V: 1, Payload: obj(`{"state":"ready","x":1}`)}, {V: 1, Payload: obj(`{"state":"ready","x":2}`)},
				{V: 2, Payload: obj(`{"state":"busy","n":{"a":[1,"b",null,true]}}`)}},
			[]model.Value{{}, {V: 1, Payload: obj(`{"x":1}`)}, {V: 1, Payload: obj(`{"state":1}`)}}},
		{model.Ledger, model.Config,
			[]model.Value{{}, {V: 1, Payload: obj(`{}`)}, {V: 1, Payload: obj(`{"default_context":"c"}`)},
				{V: 1, Payload: obj(`{"default_context":null}`)}, {V: 1, Payload: obj(`{"default_context":"c","k":1}`)},
				{V: 1, Payload: obj(`{"k":1}`)}, {V: 2, Payload: obj(`{"k":{"n":[1,2.5,"x"]}}`)}},
			[]model.Value{{V: 1, Payload: obj(`{"k":1.0}`)}, {V: 0, Payload: obj(`{}`)}}},
		{model.GraphSource, model.Config,
			[]model.Value{{}, {V: 1, Payload: obj(`{"k":1}`)}, {V: 1, Payload: obj(`{"k":2}`)}, {V: 2, Payload: obj(`{"b":[1,2],"a":{"x":null}}`)}},
			[]model.Value{{V: 1, Payload: obj(`{"k":1.0}`)}, {V: 1, Payload: obj(`{"k":1,"z":0}`)}}},
	}
	n := 0
	for _, tc := range cases {
		for _, stored := range tc.values {
			for _, expected := range append(append([]model.Value{}, tc.values...), tc.extra...) {
				n++
				id, _ := model.ParseID(fmt.Sprintf("eq%s/%d", testenv.RandomHex(3), n))
				rec := model.NewLedger(id, 1)
				if tc.kind == model.GraphSource {
					rec = model.NewGraphSource(id, "db:Bm25Index", nil, nil, 1)
				}
				rec.SetValue(tc.c, stored)
				must(t, d.Create(ctx, rec))
				next := model.Value{V: max(stored.V, expected.V) + 1, Payload: obj(`{"state":"next","address":"n"}`)}
				if tc.c == model.Head {
					next = ref("n", next.V)
				}
				cond := driver.IfEquals(expected)
				out, err := d.Update(ctx, id, tc.c, cond, next)
				must(t, err)
				what := fmt.Sprintf("%s %s stored %v, expected %v", tc.kind, tc.c, stored, expected)
				if want := cond.Holds(stored, next); out.Applied != want {
					t.Errorf("%s: applied %v, want %v", what, out.Applied, want)
				}
				if !out.Applied && !out.Current.Equal(stored) {
					t.Errorf("%s: rejected with current %v, want the stored value", what, out.Current)
				}
				got, err := d.Get(ctx, id)
				must(t, err)
				if want := map[bool]model.Value{true: next, false: stored}[out.Applied]; !got.Value(tc.c).Equal(want) {
					t.Errorf("%s: then %s = %v, want %v", what, tc.c, *got.Value(tc.c), want)
				}
			}
		}
	}
	t.Logf("%d stored/expected pairs", n)
}

// TestRoundTrip creates records with every optional field and reads them
// back unchanged; numbers come back as the same values (DynamoDB keeps up to
// 38 significant digits and normalises their text, so 2.50 reads as 2.5).
func TestRoundTrip(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	p := "rt" + testenv.RandomHex(3) + "/"
	id := func(s string) model.ID { i, _ := model.ParseID(p + s); return i }
	ledger := model.NewLedger(id("l:release/v1"), 1_700_000_000)
	ledger.SourceBranch, ledger.Branches = "main", 2
	ledger.BranchPoint = &model.BranchPoint{Address: "fluree:s3://b/c5.json", T: 5}
	ledger.Head = &model.Value{V: 7, Payload: obj(`{"address":"fluree:s3://b/c7.json","t":7}`)}
	ledger.Status = &model.Value{V: 3, Payload: obj(`{"state":"ready","queue":12345678901234567890123,"r":2.50,"l":[1,{"a":null}]}`)}
	ledger.Config = &model.Value{V: 2, Payload: obj(`{"default_context":"ctx","config_id":"bag1","x":{"y":true}}`)}
	gs := model.NewGraphSource(id("gs"), "db:Bm25Index", []string{"a:main", "b:main"}, obj(`{"k1":1.2,"f":["t"]}`), 1_700_000_001)
	gsNoDeps := model.NewGraphSource(id("gs0"), "db:HnswIndex", []string{}, nil, 0)
	for _, rec := range []*model.Record{ledger, gs, gsNoDeps} {
		must(t, d.Create(ctx, rec))
		got, err := d.Get(ctx, rec.ID)
		must(t, err)
		want, _ := json.Marshal(rec)
		have, _ := json.Marshal(got)
		if !recordsEqual(rec, got) {
			t.Errorf("round trip of %s:\n got %s\nwant %s", rec.ID, have, want)
		}
		if (rec.Dependencies == nil) != (got.Dependencies == nil) {
			t.Errorf("%s: dependencies %#v read back as %#v", rec.ID, rec.Dependencies, got.Dependencies)
		}
	}
	err := d.Create(ctx, model.NewLedger(id("gs"), 0))
	if !errors.Is(err, model.ErrAlreadyExists) {
		t.Fatalf("create over a graph source: %v, want ErrAlreadyExists", err)
	}
}

func recordsEqual(a, b *model.Record) bool {
	if a.ID != b.ID || a.Kind != b.Kind || a.Retracted != b.Retracted || a.SourceType != b.SourceType ||
		a.CreatedAt != b.CreatedAt || a.SourceBranch != b.SourceBranch || a.Branches != b.Branches ||
		strings.Join(a.Dependencies, ",") != strings.Join(b.Dependencies, ",") || fmt.Sprint(a.BranchPoint) != fmt.Sprint(b.BranchPoint) {
		return false
	}
	for _, c := range model.Concerns {
		va, vb := a.Value(c), b.Value(c)
		if (va == nil) != (vb == nil) || (va != nil && !va.Equal(*vb)) {
			return false
		}
	}
	return true
}

// TestWireSchema reads the raw items of a ledger and a graph source and
// checks the guide's attribute names and types (status_state is the
// schema's optional denormalised status.state, for state-index).
func TestWireSchema(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	ns := nameservice.New(d, nameservice.WithClock(func() time.Time { return time.Unix(1_700_000_000, 0) }))
	p := "wire" + testenv.RandomHex(3) + "/"
	must(t, ns.Init(ctx, p+"db"))
	_, err := ns.PublishCommit(ctx, p+"db", 3, "c3")
	must(t, err)
	_, err = ns.PushConfig(ctx, p+"db", nameservice.Value{}, nameservice.Value{V: 1, Payload: nameservice.Object{"default_context": "ctx", "k": 1}})
	must(t, err)
	must(t, ns.PublishGraphSource(ctx, p+"gs", "db:Bm25Index", []string{p + "db"}, map[string]any{"k": 1}))
	must(t, ns.Retract(ctx, p+"gs"))

	want := map[string]string{
		"db:main/meta":   "branch:S created_at:N incarnation:S kind:S name:S pk:S retracted:BOOL schema:N sk:S updated_at_ms:N",
		"db:main/head":   "commit_address:S commit_t:N incarnation:S pk:S schema:N sk:S updated_at_ms:N write_id:S write_id_1:S write_id_2:S",
		"db:main/index":  "incarnation:S index_address:NULL index_t:N pk:S schema:N sk:S updated_at_ms:N",
		"db:main/config": "config_meta:M config_v:N default_context_address:S incarnation:S pk:S schema:N sk:S updated_at_ms:N write_id:S write_id_1:S write_id_2:S",
		"db:main/status": "incarnation:S pk:S schema:N sk:S status:S status_state:S status_v:N updated_at_ms:N",
		"gs:main/meta":   "branch:S created_at:N dependencies:L incarnation:S kind:S name:S pk:S retracted:BOOL schema:N sk:S source_type:S updated_at_ms:N",
		"gs:main/index":  "incarnation:S index_address:NULL index_t:N pk:S schema:N sk:S updated_at_ms:N",
		"gs:main/config": "config_json:S config_v:N incarnation:S pk:S schema:N sk:S updated_at_ms:N",
		"gs:main/status": "incarnation:S pk:S schema:N sk:S status:S status_meta:M status_state:S status_v:N updated_at_ms:N write_id:S write_id_1:S write_id_2:S",
	}
	for key, attrs := range want {
		pk, sk, _ := strings.Cut(key, "/")
		out, err := d.Client().GetItem(ctx, &awsdynamodb.GetItemInput{TableName: aws.String(d.Table()), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: p + pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
		must(t, err)
		if got := describeItem(out.Item); got != attrs {
			t.Errorf("%s:\n got %s\nwant %s", key, got, attrs)
		}
	}
}

func describeItem(it map[string]types.AttributeValue) string {
	var parts []string
	for k, v := range it {
		typ := strings.TrimPrefix(fmt.Sprintf("%T", v), "*types.AttributeValueMember")
		parts = append(parts, k+":"+typ)
	}
	slicesSort(parts)
	return strings.Join(parts, " ")
}

// TestFlureeV4Attributes reads items written with Fluree v4's commit_id,
// compares and sets against them, and checks where a write puts the
// pointer: a content ID in commit_id, any other address in commit_address,
// the other attribute removed.
func TestFlureeV4Attributes(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	id, _ := model.ParseID("v4" + testenv.RandomHex(3) + "/db")
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id.String()}, "sk": &types.AttributeValueMemberS{Value: "head"}}
	must(t, d.Create(ctx, model.NewLedger(id, 0)))
	c4, c5 := testenv.CID("c4"), testenv.CID("c5")
	_, err := d.Client().UpdateItem(ctx, &awsdynamodb.UpdateItemInput{TableName: aws.String(d.Table()), Key: key,
		UpdateExpression:          aws.String("SET commit_t = :t, commit_id = :c REMOVE commit_address"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberN{Value: "4"}, ":c": &types.AttributeValueMemberS{Value: c4}}})
	must(t, err)
	rec, err := d.Get(ctx, id)
	must(t, err)
	if want := model.RefValue(c4, 4); !rec.Head.Equal(want) {
		t.Fatalf("head %v, want %v", *rec.Head, want)
	}
	head := func() string {
		raw, err := d.Client().GetItem(ctx, &awsdynamodb.GetItemInput{TableName: aws.String(d.Table()), ConsistentRead: aws.Bool(true), Key: key})
		must(t, err)
		return describeItem(raw.Item)
	}
	for _, step := range []struct {
		from, to model.Value
		attrs    string
	}{
		{model.RefValue(c4, 4), model.RefValue(c5, 5), "commit_id:S commit_t:N"},
		{model.RefValue(c5, 5), model.RefValue("fluree:file://db/commit/6.json", 6), "commit_address:S commit_t:N"},
		{model.RefValue("fluree:file://db/commit/6.json", 6), model.RefValue(c4, 7), "commit_id:S commit_t:N"},
	} {
		out, err := d.Update(ctx, id, model.Head, driver.IfEquals(step.from), step.to)
		must(t, err)
		if !out.Applied {
			t.Fatalf("compare-and-set from %v not applied: current %v", step.from, out.Current)
		}
		// incarnation sorts between the pointer and pk: not a pointer.
		if got := strings.Replace(head(), " incarnation:S", "", 1); !strings.HasPrefix(got, step.attrs+" pk:S") {
			t.Errorf("after writing %v the head item holds %s, want %s and no other pointer", step.to, got, step.attrs)
		}
	}
}

// TestErrors checks the driver's error classes: a missing table, an item
// over 400 KB, a malformed record, and that no error shows credentials.
func TestErrors(t *testing.T) {
	const secret = "SECRETsecretSECRET0123456789"
	cfg := testConfig(t)
	cfg.Credentials = credentials.NewStaticCredentialsProvider("AKIDTEST", secret, "TOKEN"+secret)
	ctx := context.Background()
	var errs []error

	// A missing table is a lasting failure: NotProvisioned, saying what to
	// do, after one request (the SDK must not retry it).
	missing := cfg
	missing.Table = "no-such-table-" + testenv.RandomHex(3)
	counter := newCountingTransport(http.DefaultTransport)
	missing.HTTPClient = &http.Client{Transport: counter}
	dm, err := dynamodb.Open(ctx, missing)
	must(t, err)
	id, _ := model.ParseID("err" + testenv.RandomHex(3) + "/db")
	_, err = dm.Get(ctx, id)
	if !errors.Is(err, model.ErrNotProvisioned) || !strings.Contains(err.Error(), "ns table create") || !strings.Contains(err.Error(), missing.Table) {
		t.Errorf("missing table: %v (code %v), want NotProvisioned naming the table and `ns table create`", err, model.Code(err))
	}
	if n := counter.n["Query"]; n != 1 {
		t.Errorf("missing table: %d Query requests, want 1 (a lasting failure is not retried)", n)
	}
	_, err = dm.Update(ctx, id, model.Status, driver.IfEquals(model.ReadyStatus()), model.Value{V: 2, Payload: model.Object{"state": "x"}})
	if !errors.Is(err, model.ErrNotProvisioned) || counter.n["UpdateItem"] != 1 {
		t.Errorf("missing table, update: %v after %d UpdateItem requests, want NotProvisioned after 1", err, counter.n["UpdateItem"])
	}
	errs = append(errs, err)

	d := openDriver(t)
	must(t, d.Create(ctx, model.NewLedger(id, 0)))
	big := model.Value{V: 2, Payload: model.Object{"state": "ready", "blob": strings.Repeat("x", 410*1024)}}
	_, err = d.Update(ctx, id, model.Status, driver.IfEquals(model.ReadyStatus()), big)
	if !errors.Is(err, model.ErrInvalidArgument) || !strings.Contains(err.Error(), "400") {
		t.Errorf("oversized item: %v, want ErrInvalidArgument naming the limit", err)
	}
	errs = append(errs, err)

	_, err = d.Client().DeleteItem(ctx, &awsdynamodb.DeleteItemInput{TableName: aws.String(d.Table()),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id.String()}, "sk": &types.AttributeValueMemberS{Value: "index"}}})
	must(t, err)
	_, err = d.Get(ctx, id)
	if !errors.Is(err, model.ErrInternal) || !strings.Contains(err.Error(), id.String()+"/index") {
		t.Errorf("record without its index item: %v, want ErrInternal naming the item", err)
	}
	errs = append(errs, err)
	page, err := d.List(ctx, driver.ListOptions{Prefix: id.Name})
	switch {
	case err != nil:
		t.Errorf("list over a broken record: %v, want it in Page.Failed", err)
	case len(page.Failed) != 1 || page.Failed[0].ID != id || !errors.Is(page.Failed[0], model.ErrInternal):
		t.Errorf("list over a broken record: failed %v, want one ErrInternal naming %s", page.Failed, id)
	default:
		errs = append(errs, page.Failed[0])
	}

	_, err = d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("x", 1))
	if err != nil {
		t.Errorf("update of an intact concern of a broken record: %v", err)
	}
	other, _ := model.ParseID("err" + testenv.RandomHex(3) + "/none")
	_, err = d.Update(ctx, other, model.Head, driver.IfAbove(), model.RefValue("x", 1))
	if !errors.Is(err, model.ErrNotFound) {
		t.Errorf("update of an unknown ID: %v, want ErrNotFound", err)
	}
	errs = append(errs, err, d.Retract(ctx, other, time.Now()), d.Delete(ctx, other))
	for _, err := range errs {
		if err != nil && (strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "AKIDTEST")) {
			t.Errorf("error shows credentials: %v", err)
		}
	}
}

func TestParseURL(t *testing.T) {
	good := map[string]dynamodb.Config{
		"dynamodb://fluree-nameservice":                               {Table: "fluree-nameservice"},
		"dynamodb://ns_Table.1?region=eu-west-1&profile=dev":          {Table: "ns_Table.1", Region: "eu-west-1", Profile: "dev"},
		"dynamodb://t01?endpoint=http://127.0.0.1:8000&timeout=250ms": {Table: "t01", Endpoint: "http://127.0.0.1:8000", Timeout: 250 * time.Millisecond},
		"DynamoDB://t01?max_attempts=9&retry_limiter=none":            {Table: "t01", MaxAttempts: 9},
		"dynamodb://t01?list_parallel=3":                              {Table: "t01", ListParallel: 3},
	}
	for raw, want := range good {
		u, err := url.Parse(raw)
		must(t, err)
		got, err := dynamodb.ParseURL(u)
		must(t, err)
		if got != want {
			t.Errorf("%s: %+v, want %+v", raw, got, want)
		}
	}
	for _, raw := range []string{"dynamodb://", "dynamodb://ab", "dynamodb://t01/path", "dynamodb://t01?regoin=x",
		"dynamodb://t01?timeout=5", "dynamodb://t01?max_attempts=0", "dynamodb://user:pw@t01", "dynamodb://t01?retry_limiter=x",
		"dynamodb://t01?list_parallel=0", "dynamodb://t01?list_parallel=x"} {
		u, err := url.Parse(raw)
		must(t, err)
		if _, err := dynamodb.ParseURL(u); !errors.Is(err, model.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", raw, err)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: error shows the password: %v", raw, err)
		}
	}
}

// TestProvisionIsIdempotent runs Provision on the existing table.
func TestProvisionIsIdempotent(t *testing.T) {
	must(t, openDriver(t).Provision(context.Background()))
}

func slicesSort(s []string) { sort.Strings(s) }

// TestUpdateOnARecordCreatedMeanwhile: a push whose condition failed on a
// missing record, which another client created before the push read the
// item back, is sent again and applies: "not applied" would name a value
// (the new record's unborn head) it never failed on.
func TestUpdateOnARecordCreatedMeanwhile(t *testing.T) {
	cfg := testConfig(t)
	creator := nameservice.New(openDriver(t))
	ctx := context.Background()
	id := "meanwhile" + testenv.RandomHex(3)
	created := &afterRequest{base: http.DefaultTransport.(*http.Transport).Clone(), op: "UpdateItem"}
	created.hook = func() { must(t, creator.Init(ctx, id)) }
	created.armed.Store(true)
	cfg.HTTPClient = &http.Client{Transport: created, Timeout: time.Minute}
	pusher := nameservice.New(openWith(t, cfg))
	out, err := pusher.PublishCommit(ctx, id, 1, "fluree:file://c1")
	must(t, err)
	if created.armed.Load() || !out.Applied || out.Current.V != 1 {
		t.Fatalf("publish over a record created meanwhile: %+v (record created: %v), want applied", out, !created.armed.Load())
	}
}

// TestDeleteResend: a resend of a purge writes nothing (see
// TestCreateResend for why). It is done when its token shows an earlier
// attempt landed, on the record or one created since; it is outcome
// unknown otherwise, never not found, whether the record is absent (the
// earlier attempt may still land, or have removed the record before its
// token was recorded) or there; and the check it sends leaves no token
// behind, so that an attempt of the same write still on its way purges for
// real instead of being answered as if it had landed.
func TestDeleteResend(t *testing.T) {
	ns := nameservice.New(openDriver(t))
	ctx := context.Background()
	id := "resend" + testenv.RandomHex(3)
	must(t, ns.Init(ctx, id))
	first := driver.Write{ID: driver.NewWriteID()}
	must(t, ns.Purge(driver.WithWrite(ctx, first), id))
	first.Resend = true
	if err := ns.Purge(driver.WithWrite(ctx, first), id); err != nil {
		t.Fatalf("resend of a purge that landed = %v, want done", err)
	}
	other := driver.Write{ID: driver.NewWriteID(), Resend: true}
	err := ns.Purge(driver.WithWrite(ctx, other), id)
	if !errors.Is(err, model.ErrOutcomeUnknown) || errors.Is(err, model.ErrNotFound) {
		t.Fatalf("resend of a purge, record absent, no attempt on record = %v, want outcome unknown", err)
	}
	must(t, ns.Init(ctx, id))
	if err := ns.Purge(driver.WithWrite(ctx, first), id); err != nil {
		t.Fatalf("resend of a purge that landed, record created again since = %v, want done", err)
	}
	if err := ns.Purge(driver.WithWrite(ctx, other), id); !errors.Is(err, model.ErrOutcomeUnknown) {
		t.Fatalf("resend of a purge, record present, no attempt on record = %v, want outcome unknown", err)
	}
	if _, err := ns.Lookup(ctx, id); err != nil {
		t.Fatalf("lookup after resends of purges = %v, want the record: a resend purged it", err)
	}
	other.Resend = false
	must(t, ns.Purge(driver.WithWrite(ctx, other), id))
	if _, err := ns.Lookup(ctx, id); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("lookup after a purge sent after its resend's check = %v, want not found: the check left a token behind", err)
	}
}

// TestCreateResend: a resend of a create (driver.Write.Resend: ns serve
// marks a client's retry so, on an instance that may not have seen the
// first attempt) writes nothing. The replicated DynamoDB campaign (seed
// 2145108244) found why: a create's first attempt, on one instance, failed
// (the ID was taken) and that answer was kept for the client's resends; the
// record was purged; the resend, on another instance, created it; and the
// client then got the first instance's "already exists" for a write that
// had landed. A resend is done when the record is the create's own or its
// token shows an earlier attempt landed (even on a record purged or
// replaced since), and outcome unknown otherwise; its check leaves no token
// behind, so an attempt still on its way creates for real.
func TestCreateResend(t *testing.T) {
	first, other := nameservice.New(openDriver(t)), nameservice.New(openDriver(t)) // two instances
	ctx := context.Background()
	id := "createresend" + testenv.RandomHex(3)
	must(t, other.Init(ctx, id))
	w := driver.Write{ID: driver.NewWriteID()}
	if err := first.Init(driver.WithWrite(ctx, w), id); !errors.Is(err, model.ErrAlreadyExists) {
		t.Fatalf("create of a taken ID = %v, want already exists", err)
	}
	must(t, other.Purge(ctx, id))
	resend := driver.WithWrite(ctx, driver.Write{ID: w.ID, Resend: true})
	if err := other.Init(resend, id); !errors.Is(err, model.ErrOutcomeUnknown) {
		t.Fatalf("resend of a create refused earlier, record purged since = %v, want outcome unknown", err)
	}
	if _, err := other.Lookup(ctx, id); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("lookup after the resend = %v, want not found: the resend created the record", err)
	}
	must(t, other.Init(ctx, id))
	if err := other.Init(resend, id); !errors.Is(err, model.ErrOutcomeUnknown) {
		t.Fatalf("resend of a create, the ID another's = %v, want outcome unknown", err)
	}

	landed := driver.Write{ID: driver.NewWriteID()}
	again := driver.WithWrite(ctx, driver.Write{ID: landed.ID, Resend: true})
	must(t, other.Purge(ctx, id))
	must(t, first.Init(driver.WithWrite(ctx, landed), id))
	must(t, other.Init(again, id)) // the record is the create's own
	must(t, other.Purge(ctx, id))
	must(t, other.Init(again, id)) // purged since: the token tells
	must(t, other.Init(ctx, id))
	must(t, other.Init(again, id)) // replaced since: the token tells

	must(t, other.Purge(ctx, id))
	late := driver.Write{ID: driver.NewWriteID()}
	if err := other.Init(driver.WithWrite(ctx, driver.Write{ID: late.ID, Resend: true}), id); !errors.Is(err, model.ErrOutcomeUnknown) {
		t.Fatalf("resend of a create, no attempt on record = %v, want outcome unknown", err)
	}
	must(t, first.Init(driver.WithWrite(ctx, late), id))
	if _, err := other.Lookup(ctx, id); err != nil {
		t.Fatalf("lookup after a create sent after its resend's check = %v: the check left a token behind", err)
	}
}

// TestRetractResend: a resend of a retract writes nothing (see
// TestCreateResend for why). It is done when the record is retracted, by
// it or another (a retract of a retracted record succeeds), or when its
// token shows an earlier attempt landed on a record purged since; outcome
// unknown otherwise, never not found.
func TestRetractResend(t *testing.T) {
	ns := nameservice.New(openDriver(t))
	ctx := context.Background()
	id := "retractresend" + testenv.RandomHex(3)
	must(t, ns.Init(ctx, id))
	other := driver.WithWrite(ctx, driver.Write{ID: driver.NewWriteID(), Resend: true})
	if err := ns.Retract(other, id); !errors.Is(err, model.ErrOutcomeUnknown) {
		t.Fatalf("resend of a retract, record live, no attempt on record = %v, want outcome unknown", err)
	}
	if rec, err := ns.Lookup(ctx, id); err != nil || rec.Retracted {
		t.Fatalf("after the resend: %v, %v; want the record live: the resend retracted it", rec, err)
	}
	first := driver.Write{ID: driver.NewWriteID()}
	must(t, ns.Retract(driver.WithWrite(ctx, first), id))
	must(t, ns.Retract(other, id)) // retracted by another: nothing left to do
	first.Resend = true
	must(t, ns.Purge(ctx, id))
	must(t, ns.Init(ctx, id))
	must(t, ns.Retract(driver.WithWrite(ctx, first), id)) // landed on the record purged since: the token tells
	if rec, err := ns.Lookup(ctx, id); err != nil || rec.Retracted {
		t.Fatalf("after a resend of a retract that landed on a purged record: %v, %v; want the new record live", rec, err)
	}
	must(t, ns.Purge(ctx, id))
	if err := ns.Retract(other, id); !errors.Is(err, model.ErrOutcomeUnknown) {
		t.Fatalf("resend of a retract, record absent = %v, want outcome unknown", err)
	}
}

// TestBranchResend: resends of a branch create and a branch drop write
// nothing (see TestCreateResend for why); the transaction token remembers
// a write that landed on a branch dropped or created again since.
func TestBranchResend(t *testing.T) {
	first, other := nameservice.New(openDriver(t)), nameservice.New(openDriver(t)) // two instances
	resendtest.Branches(t, first, other, "branchresend"+testenv.RandomHex(3), resendtest.Memory{Creates: true, Drops: true})
}
