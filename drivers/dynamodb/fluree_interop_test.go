package dynamodb_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// fluree issues the requests of Fluree v4.1.6's DynamoDB nameservice
// exactly as fluree-db-storage-aws/src/dynamodb/mod.rs (DynamoDbNameService)
// builds them: the same expressions, names and values.
type fluree struct {
	c     *awsdynamodb.Client
	table string
}

// newFluree returns a client for the test table with a long timeout per
// attempt, as Fluree's (which sets none): an attempt cut short on a loaded
// machine would be retried and could fail its own condition.
func newFluree(t *testing.T) fluree {
	cfg := testConfig(t)
	cfg.Timeout = time.Minute
	c, err := dynamodb.NewClient(context.Background(), cfg)
	must(t, err)
	return fluree{c: c, table: cfg.Table}
}

// flRef is a ref as Fluree reads it (RefValue): id "" is None.
type flRef struct {
	id string
	t  int64
}

func now() types.AttributeValue { return n(time.Now().UnixMilli()) }

func (f fluree) key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk)}
}

// applied maps an UpdateItem's error to (applied, err), as Fluree does: a
// failed condition is no error.
func applied(err error) (bool, error) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	return err == nil, err
}

// publishCommit is CommitPublisher::publish_commit, then (when applied)
// put_commit_index_item.
func (f fluree) publishCommit(ctx context.Context, pk string, t int64, id string) (bool, error) {
	_, err := f.c.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
		TableName: aws.String(f.table), Key: f.key(pk, "head"),
		UpdateExpression:          aws.String("SET #ci = :cid, #ct = :t, #ua = :now"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND #ct < :t"),
		ExpressionAttributeNames:  map[string]string{"#pk": "pk", "#ci": "commit_id", "#ct": "commit_t", "#ua": "updated_at_ms"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":cid": s(id), ":t": n(t), ":now": now()},
	})
	ok, err := applied(err)
	if ok {
		err = f.putCommitIndexItem(ctx, pk, t, id)
	}
	return ok, err
}

// putCommitIndexItem is DynamoDbNameService::put_commit_index_item.
func (f fluree) putCommitIndexItem(ctx context.Context, pk string, t int64, id string) error {
	_, err := f.c.PutItem(ctx, &awsdynamodb.PutItemInput{TableName: aws.String(f.table), Item: map[string]types.AttributeValue{
		"pk": s(pk), "sk": s(fmt.Sprintf("commit#%020d", t)), "commit_cid": s(id), "commit_t": n(t),
		"ttl": n(time.Now().Unix() + 30*24*60*60),
	}})
	return err
}

// casRef is RefPublisher::compare_and_set_ref for an expected ref that
// exists: case 2 (expected unborn) or case 3 (expected has an id), on the
// head (commit_id, commit_t) or the index (index_id, index_t).
func (f fluree) casRef(ctx context.Context, pk string, c model.Concern, exp, next flRef) (bool, error) {
	sk, idAttr, tAttr := "head", "commit_id", "commit_t"
	if c == model.Index {
		sk, idAttr, tAttr = "index", "index_id", "index_t"
	}
	in := &awsdynamodb.UpdateItemInput{
		TableName: aws.String(f.table), Key: f.key(pk, sk),
		UpdateExpression:          aws.String("SET #id = :new_id, #t = :new_t, #ua = :now"),
		ExpressionAttributeNames:  map[string]string{"#id": idAttr, "#t": tAttr, "#ua": "updated_at_ms"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":new_id": s(next.id), ":new_t": n(next.t), ":now": now()},
	}
	if exp.id == "" && exp.t == 0 {
		in.ConditionExpression = aws.String("(attribute_not_exists(#id) OR attribute_type(#id, :null_type)) AND #t = :zero")
		in.ExpressionAttributeValues[":null_type"], in.ExpressionAttributeValues[":zero"] = s("NULL"), n(0)
	} else {
		in.ConditionExpression = aws.String("#id = :exp_id AND #t = :exp_t")
		in.ExpressionAttributeValues[":exp_id"], in.ExpressionAttributeValues[":exp_t"] = s(exp.id), n(exp.t)
	}
	_, err := f.c.UpdateItem(ctx, in)
	ok, err := applied(err)
	if ok && c == model.Head {
		err = f.putCommitIndexItem(ctx, pk, next.t, next.id)
	}
	return ok, err
}

// publishIndex is IndexPublisher::publish_index: update_index_item's
// meta_exists GetItem, then send_index_update with the condition "#it < :t"
// (and its fallback when that fails).
func (f fluree) publishIndex(ctx context.Context, pk string, t int64, id string) (bool, error) {
	meta, err := f.c.GetItem(ctx, &awsdynamodb.GetItemInput{TableName: aws.String(f.table), Key: f.key(pk, "meta"),
		ProjectionExpression: aws.String("#pk"), ExpressionAttributeNames: map[string]string{"#pk": "pk"}})
	if err != nil || meta.Item == nil {
		return false, fmt.Errorf("ledger not initialized: %v", err)
	}
	send := func(cond string) (bool, error) {
		_, err := f.c.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
			TableName: aws.String(f.table), Key: f.key(pk, "index"),
			UpdateExpression:          aws.String("SET #ii = :iid, #it = :t, #ua = :now"),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  map[string]string{"#ii": "index_id", "#it": "index_t", "#ua": "updated_at_ms"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":iid": s(id), ":t": n(t), ":now": now()},
		})
		return applied(err)
	}
	if ok, err := send("#it < :t"); ok || err != nil {
		return ok, err
	}
	return send("attribute_not_exists(#it) OR #it < :t")
}

// pushConfig is ConfigPublisher::push_config for a payload with a default
// context and no extra keys (expected v above 0).
func (f fluree) pushConfig(ctx context.Context, pk string, expV, newV int64, defaultContext string) (bool, error) {
	_, err := f.c.UpdateItem(ctx, &awsdynamodb.UpdateItemInput{
		TableName: aws.String(f.table), Key: f.key(pk, "config"),
		ConditionExpression:       aws.String("#cv = :expected_v"),
		UpdateExpression:          aws.String("SET #cv = :new_v, #ua = :now, #dc = :new_dc REMOVE #cm"),
		ExpressionAttributeNames:  map[string]string{"#cv": "config_v", "#ua": "updated_at_ms", "#dc": "default_context_address", "#cm": "config_meta"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":new_v": n(newV), ":now": now(), ":expected_v": n(expV), ":new_dc": s(defaultContext)},
	})
	return applied(err)
}

// flRecord is what Fluree's lookup reads of a ledger.
type flRecord struct {
	head, index    flRef
	defaultContext string
	configV        int64
}

// lookup is NameServiceLookup::lookup: query_metadata_items (a consistent
// Query with "#pk = :pk AND #sk >= :min_sk", :min_sk "config"), then
// items_to_ns_record, which reads commit_id / index_id only, parsed as
// content IDs, and the t beside them. It also returns how many Query
// pages it took.
func (f fluree) lookup(ctx context.Context, pk string) (flRecord, error) {
	out, err := f.c.Query(ctx, &awsdynamodb.QueryInput{
		TableName:                 aws.String(f.table),
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk >= :min_sk"),
		ExpressionAttributeNames:  map[string]string{"#pk": "pk", "#sk": "sk"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pk), ":min_sk": s("config")},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return flRecord{}, err
	}
	var r flRecord
	str := func(it map[string]types.AttributeValue, a string) string {
		v, _ := it[a].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	num := func(it map[string]types.AttributeValue, a string) int64 {
		v, _ := it[a].(*types.AttributeValueMemberN)
		if v == nil {
			return 0
		}
		i, _ := strconv.ParseInt(v.Value, 10, 64)
		return i
	}
	contentID := func(it map[string]types.AttributeValue, a string) string { // s.parse::<ContentId>().ok()
		if v := str(it, a); cid.Parse(v) == nil {
			return v
		}
		return ""
	}
	for _, it := range out.Items {
		switch str(it, "sk") {
		case "head":
			r.head = flRef{contentID(it, "commit_id"), num(it, "commit_t")}
		case "index":
			r.index = flRef{contentID(it, "index_id"), num(it, "index_t")}
		case "config":
			r.defaultContext, r.configV = contentID(it, "default_context_address"), num(it, "config_v")
		}
	}
	return r, nil
}

// interop is one ledger written by both sides, and the pointers it must
// hold: the last write applied.
type interop struct {
	t     *testing.T
	ns    *nameservice.NameService
	fl    fluree
	id    string
	head  model.Value
	index model.Value
}

// step is one write by one side; it returns the new value of concern c
// when it applied, and whether it was attempted at all (Fluree's
// compare-and-set needs an expected id it can parse).
type step struct {
	name string
	c    model.Concern
	run  func(ctx context.Context, x *interop, t int64) (next model.Value, tried bool, err error)
}

func (x *interop) cur(c model.Concern) model.Value {
	if c == model.Head {
		return x.head
	}
	return x.index
}

// asFluree is a value as Fluree reads it.
func asFluree(v model.Value) flRef {
	if v.Unborn() {
		return flRef{}
	}
	r, _ := v.Ref()
	if cid.Parse(r.Address) != nil {
		return flRef{"", v.V}
	}
	return flRef{r.Address, v.V}
}

func ourAddress(cidValue bool) func(id string, t int64) string {
	return func(id string, t int64) string {
		if cidValue {
			return testenv.CID(fmt.Sprint("ours", id, t))
		}
		return fmt.Sprintf("fluree:file://%s/commit/%d.json", id, t)
	}
}

func interopSteps() []step {
	var steps []step
	for _, cidValue := range []bool{true, false} {
		kind := map[bool]string{true: "content ID", false: "address"}[cidValue]
		addr := ourAddress(cidValue)
		for _, c := range []model.Concern{model.Head, model.Index} {
			steps = append(steps,
				step{fmt.Sprintf("our publish %s (%s)", c, kind), c, func(ctx context.Context, x *interop, t int64) (model.Value, bool, error) {
					var out nameservice.Outcome
					var err error
					if c == model.Head {
						out, err = x.ns.PublishCommit(ctx, x.id, t, addr(x.id, t))
					} else {
						out, err = x.ns.PublishIndex(ctx, x.id, t, addr(x.id, t))
					}
					return outcome(out, err, model.RefValue(addr(x.id, t), t))
				}},
				step{fmt.Sprintf("our compare-and-set %s (%s)", c, kind), c, func(ctx context.Context, x *interop, t int64) (model.Value, bool, error) {
					exp := x.cur(c)
					out, err := x.ns.CompareAndSetRef(ctx, x.id, c, &exp, nameservice.Ref{Address: addr(x.id, t), T: t})
					return outcome(out, err, model.RefValue(addr(x.id, t), t))
				}})
		}
	}
	graphs := step{"our publish index with named graphs", model.Index, func(ctx context.Context, x *interop, t int64) (model.Value, bool, error) {
		g := map[string]*nameservice.GraphIndex{model.DefaultGraph: {Address: testenv.CID(fmt.Sprint("g", x.id, t)), T: t}, "g2": {Address: "g2-root", T: t, Rev: 1}}
		out, err := x.ns.PublishIndexGraphs(ctx, x.id, g)
		return outcome(out, err, model.GraphsValue(g))
	}}
	steps = append(steps, graphs)
	for _, c := range []model.Concern{model.Head, model.Index} {
		steps = append(steps,
			step{fmt.Sprintf("Fluree publish %s", c), c, func(ctx context.Context, x *interop, t int64) (model.Value, bool, error) {
				id := testenv.CID(fmt.Sprint("fluree", x.id, c, t))
				var ok bool
				var err error
				if c == model.Head {
					ok, err = x.fl.publishCommit(ctx, x.id, t, id)
				} else {
					ok, err = x.fl.publishIndex(ctx, x.id, t, id)
				}
				return flOutcome(ok, err, model.RefValue(id, t))
			}},
			step{fmt.Sprintf("Fluree compare-and-set %s", c), c, func(ctx context.Context, x *interop, t int64) (model.Value, bool, error) {
				exp := asFluree(x.cur(c))
				if exp.id == "" && exp.t != 0 {
					return model.Value{}, false, nil // Fluree sees a t without an id: it cannot compare-and-set from there
				}
				id := testenv.CID(fmt.Sprint("fluree-cas", x.id, c, t))
				ok, err := x.fl.casRef(ctx, x.id, c, exp, flRef{id, t})
				return flOutcome(ok, err, model.RefValue(id, t))
			}})
	}
	return steps
}

func outcome(out nameservice.Outcome, err error, next model.Value) (model.Value, bool, error) {
	if err == nil && !out.Applied {
		err = fmt.Errorf("not applied: current %v", out.Current)
	}
	return next, true, err
}

func flOutcome(ok bool, err error, next model.Value) (model.Value, bool, error) {
	if err == nil && !ok {
		err = errors.New("Fluree's condition failed")
	}
	return next, true, err
}

// check reads the ledger with both readers and compares each with the
// value last written.
func (x *interop) check(ctx context.Context, after string) {
	x.t.Helper()
	rec, err := x.ns.Lookup(ctx, x.id)
	if err != nil {
		x.t.Fatalf("%s: our lookup: %v", after, err)
	}
	fr, err := x.fl.lookup(ctx, x.id)
	if err != nil {
		x.t.Fatalf("%s: Fluree's lookup: %v", after, err)
	}
	for _, c := range []model.Concern{model.Head, model.Index} {
		want := x.cur(c)
		if got := *rec.Value(c); !got.Equal(want) {
			x.t.Errorf("%s: we read %s %v, want %v", after, c, got, want)
		}
		got := map[model.Concern]flRef{model.Head: fr.head, model.Index: fr.index}[c]
		if got != asFluree(want) {
			x.t.Errorf("%s: Fluree reads %s %+v, want %+v", after, c, got, asFluree(want))
		}
	}
}

// TestFlureeInterleaved writes ledgers with this driver and with Fluree's
// own requests, in every order of two steps on one concern (the head and
// the index are separate items: writes to one never change the other)
// drawn from publish and compare-and-set on either side (ours with a
// content ID or another address, and an index with named graphs), and each
// step alone on a new ledger. After each step it reads the ledger back as
// this driver and as Fluree does: both always read the pointer last written
// (Fluree: its content ID, or no id beside the t when the address is none),
// and every write applies, Fluree's compare-and-set against our writes and
// ours against Fluree's. The ordered pairs are the windows of one walk per
// concern (a de Bruijn sequence), so each pair starts from whatever the
// walk left, as on a live ledger.
func TestFlureeInterleaved(t *testing.T) {
	d := openDriver(t)
	ns := nameservice.New(d)
	fl := newFluree(t)
	prefix := "interop" + testenv.RandomHex(3) + "/"
	ctx := context.Background()
	var runs [][]step
	for _, c := range []model.Concern{model.Head, model.Index} {
		var steps []step
		for _, st := range interopSteps() {
			if st.c == c {
				steps = append(steps, st)
				runs = append(runs, []step{st})
			}
		}
		var walk []step
		pairs := deBruijnPairs(len(steps))
		if len(pairs) != len(steps)*len(steps)+1 {
			t.Fatalf("the walk over %d steps has %d steps, want %d", len(steps), len(pairs), len(steps)*len(steps)+1)
		}
		for _, i := range pairs {
			walk = append(walk, steps[i])
		}
		runs = append(runs, walk)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, r := range runs {
		x := &interop{t: t, ns: ns, fl: fl, id: fmt.Sprintf("%sl%03d:main", prefix, i)}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			x.run(ctx, r...)
		}()
	}
	wg.Wait()
}

// deBruijnPairs returns a sequence of 0..k-1 in which every ordered pair
// (i, j), i == j included, occurs exactly once as neighbours: k*k+1
// elements.
func deBruijnPairs(k int) []int {
	seq := []int{0}
	used := map[[2]int]bool{}
	for next := 0; next >= 0; {
		last := seq[len(seq)-1]
		next = -1
		for j := k - 1; j >= 0 && next < 0; j-- { // prefer the largest (Martin's rule): it never stops early
			if !used[[2]int{last, j}] {
				next = j
			}
		}
		if next >= 0 {
			used[[2]int{last, next}] = true
			seq = append(seq, next)
		}
	}
	return seq
}

// run creates the ledger, runs steps on it, checking both readers after
// each, and purges it.
func (x *interop) run(ctx context.Context, steps ...step) {
	if err := x.ns.Init(ctx, x.id); err != nil {
		x.t.Error(err)
		return
	}
	prev := "creation"
	for i, st := range steps {
		t := x.cur(st.c).V + 1
		next, tried, err := st.run(ctx, x, t)
		if !tried {
			continue
		}
		after := fmt.Sprintf("%s, step %d: %s after %s", x.id, i, st.name, prev)
		prev = st.name
		if err != nil {
			x.t.Errorf("%s: %v", after, err)
			return
		}
		if st.c == model.Head {
			x.head = next
		} else {
			x.index = next
		}
		x.check(ctx, after)
	}
	if err := x.ns.Purge(ctx, x.id); err != nil {
		x.t.Errorf("%s: purge: %v", x.id, err)
	}
}

// sharedLedger creates a new ledger on the test table and returns this
// driver, a NameService over it, Fluree's client and the ledger's ID
// (name:main, as Fluree's pk).
func sharedLedger(t *testing.T) (*dynamodb.Driver, *nameservice.NameService, fluree, string) {
	d := openDriver(t)
	ns := nameservice.New(d)
	id := "shared" + testenv.RandomHex(4) + "/db:main"
	must(t, ns.Init(context.Background(), id))
	return d, ns, newFluree(t), id
}

// TestFlureeConfigInterop pushes a ledger config both ways: Fluree reads
// the default context this driver wrote (a content ID, as Fluree writes
// it) and compares-and-sets against it; this driver reads Fluree's and
// compares-and-sets against that.
func TestFlureeConfigInterop(t *testing.T) {
	_, ns, fl, id := sharedLedger(t)
	ctx := context.Background()
	ctx1, ctx2, ctx3 := testenv.CID("ctx1"), testenv.CID("ctx2"), testenv.CID("ctx3")
	v1 := nameservice.Value{V: 1, Payload: nameservice.Object{"default_context": ctx1}}
	out, err := ns.PushConfig(ctx, id, nameservice.Value{}, v1)
	must(t, err)
	if !out.Applied {
		t.Fatalf("our push: %v", out.Current)
	}
	fr, err := fl.lookup(ctx, id)
	must(t, err)
	if fr.defaultContext != ctx1 || fr.configV != 1 {
		t.Fatalf("Fluree reads default context %q at v%d, want %q at v1", fr.defaultContext, fr.configV, ctx1)
	}
	ok, err := fl.pushConfig(ctx, id, 1, 2, ctx2)
	must(t, err)
	if !ok {
		t.Fatal("Fluree's compare-and-set against our config failed")
	}
	v2 := nameservice.Value{V: 2, Payload: nameservice.Object{"default_context": ctx2}}
	got, err := ns.ConfigOf(ctx, id)
	must(t, err)
	if !got.Equal(v2) {
		t.Fatalf("we read %v after Fluree's push, want %v", got, v2)
	}
	out, err = ns.PushConfig(ctx, id, v2, nameservice.Value{V: 3, Payload: nameservice.Object{"default_context": ctx3}})
	must(t, err)
	if !out.Applied {
		t.Fatalf("our compare-and-set against Fluree's config: %v", out.Current)
	}
	if fr, err = fl.lookup(ctx, id); err != nil || fr.defaultContext != ctx3 || fr.configV != 3 {
		t.Fatalf("Fluree reads default context %q at v%d (%v), want %q at v3", fr.defaultContext, fr.configV, err, ctx3)
	}
}

// pendingCommitCIDs is PendingCommitCIDs' request in Fluree
// (DynamoDbNameService::pending_commit_cids): a consistent Query of the
// sort keys between "commit#" and t = sinceT+1 zero-padded and "commit#"
// and twenty 9s, reading commit_t and commit_cid.
func (f fluree) pendingCommitCIDs(ctx context.Context, pk string, sinceT int64) ([]nameservice.CommitEntry, error) {
	out, err := f.c.Query(ctx, &awsdynamodb.QueryInput{
		TableName:                 aws.String(f.table),
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  map[string]string{"#pk": "pk", "#sk": "sk"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pk), ":lo": s(fmt.Sprintf("commit#%020d", sinceT+1)), ":hi": s("commit#99999999999999999999")},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	var entries []nameservice.CommitEntry
	for _, it := range out.Items {
		c, _ := it["commit_cid"].(*types.AttributeValueMemberS)
		t, _ := it["commit_t"].(*types.AttributeValueMemberN)
		if c != nil && t != nil && cid.Parse(c.Value) == nil {
			n, _ := strconv.ParseInt(t.Value, 10, 64)
			entries = append(entries, nameservice.CommitEntry{T: n, CID: c.Value})
		}
	}
	return entries, nil
}

// TestFlureeCommitIndex: a content-ID head published here writes the same
// commit-index row as Fluree's publish_commit (the same attributes, a ttl
// 30 days on); each side reads the other's rows with pending_commit_cids,
// and a prune here removes Fluree's rows too.
func TestFlureeCommitIndex(t *testing.T) {
	d, ns, fl, id := sharedLedger(t)
	ctx := context.Background()
	c1, c2, c3 := testenv.CID("c1"), testenv.CID("c2"), testenv.CID("c3")
	_, err := ns.PublishCommit(ctx, id, 1, c1)
	must(t, err)
	ok, err := fl.publishCommit(ctx, id, 2, c2)
	if err != nil || !ok {
		t.Fatalf("Fluree's publish after ours: %v, %v", ok, err)
	}
	exp := model.RefValue(c2, 2)
	_, err = ns.CompareAndSetRef(ctx, id, nameservice.Head, &exp, nameservice.Ref{Address: c3, T: 3})
	must(t, err)
	row := func(t64 int64) map[string]types.AttributeValue {
		out, err := d.Client().GetItem(ctx, &awsdynamodb.GetItemInput{TableName: aws.String(d.Table()), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": s(id), "sk": s(fmt.Sprintf("commit#%020d", t64))}})
		must(t, err)
		return out.Item
	}
	ours, theirs := row(1), row(2)
	if describeItem(ours) != describeItem(theirs) || describeItem(ours) != "commit_cid:S commit_t:N pk:S sk:S ttl:N" {
		t.Errorf("our commit row %s, Fluree's %s", describeItem(ours), describeItem(theirs))
	}
	ttl, _ := strconv.ParseInt(ours["ttl"].(*types.AttributeValueMemberN).Value, 10, 64)
	if days := time.Until(time.Unix(ttl, 0)).Hours() / 24; days < 29 || days > 31 {
		t.Errorf("our commit row's ttl is %.1f days on, want 30", days)
	}
	want := []nameservice.CommitEntry{{T: 1, CID: c1}, {T: 2, CID: c2}, {T: 3, CID: c3}}
	got, err := fl.pendingCommitCIDs(ctx, id, 0)
	must(t, err)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Fluree's pending_commit_cids: %v, want %v", got, want)
	}
	mine, found, err := ns.PendingCommitCIDs(ctx, id, 1)
	must(t, err)
	if !found || fmt.Sprint(mine) != fmt.Sprint(want[1:]) {
		t.Errorf("our pending above 1: %v (ok %v), want %v", mine, found, want[1:])
	}
	must(t, ns.PruneCommitIndex(ctx, id, 2))
	if got, err = fl.pendingCommitCIDs(ctx, id, 0); err != nil || fmt.Sprint(got) != fmt.Sprint(want[2:]) {
		t.Errorf("Fluree's pending_commit_cids after our prune up to 2: %v, %v, want %v", got, err, want[2:])
	}
}
