package dynamodb

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/model"
)

// itemsJSON encodes a record's items as the fuzz input form: a JSON object
// of sort key -> item, each attribute a JSON value (see fuzzItems).
func itemsJSON(t testing.TB, rec *model.Record) []byte {
	items, err := recordItems(rec, 1, "inc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, it := range items {
		m, err := convertMap(it, fromAV)
		if err != nil {
			t.Fatal(err)
		}
		out[it[attrSK].(*types.AttributeValueMemberS).Value] = m
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fuzzItems turns the fuzz input into items: every JSON value becomes the
// attribute value toAV makes of it (S, N, BOOL, NULL, L, M).
func fuzzItems(data []byte) (map[string]item, bool) {
	v, err := jsonx.Decode(data)
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, false
	}
	items := map[string]item{}
	for sk, raw := range m {
		attrs, ok := raw.(map[string]any)
		if !ok {
			return nil, false
		}
		it := item{}
		for n, a := range attrs {
			av, err := toAV(a)
			if err != nil {
				return nil, false
			}
			it[n] = av
		}
		items[sk] = it
	}
	return items, true
}

// FuzzDecodeRecord feeds arbitrary items to the record decoder: it must never
// panic, and fail only with ErrInternal; a record it accepts is valid and
// survives being written as items and read again unchanged.
//
//	go test -fuzz FuzzDecodeRecord ./drivers/dynamodb/
func FuzzDecodeRecord(f *testing.F) {
	led := model.NewLedger(model.ID{Name: "mydb", Branch: "main"}, 1700000000)
	*led.Head = model.RefValue("fluree:s3://b/c5.json", 5)
	*led.Config = model.Value{V: 2, Payload: model.Object{"default_context": "ctx", "x": []any{json.Number("1"), nil}}}
	gs := model.NewGraphSource(model.ID{Name: "search", Branch: "main"}, "db:Bm25Index", []string{"mydb:main"}, model.Object{"k1": json.Number("1.2")}, 1)
	*gs.Status = model.Value{V: 3, Payload: model.Object{"state": "retracted", "retracted_at": json.Number("5")}}
	gs.Retracted = true
	f.Add("mydb:main", itemsJSON(f, led))
	f.Add("search:main", itemsJSON(f, gs))
	f.Add("x:main", []byte(`{"meta":{"kind":"ledger"},"head":{"commit_t":"x"}}`))
	f.Fuzz(func(t *testing.T, pk string, data []byte) {
		items, ok := fuzzItems(data)
		if !ok {
			return
		}
		rec, err := decodeRecord(pk, items)
		if err != nil {
			if !errors.Is(err, model.ErrInternal) {
				t.Fatalf("decode error does not wrap ErrInternal: %v", err)
			}
			return
		}
		if rec == nil {
			return
		}
		if err := rec.Validate(); err != nil {
			t.Fatalf("decoded an invalid record: %v", err)
		}
		again, err := recordItems(rec, 1, "inc")
		if err != nil {
			if errors.Is(err, model.ErrInvalidArgument) && strings.Contains(err.Error(), "400 KB") {
				return
			}
			t.Fatalf("decoded record cannot be written: %v", err)
		}
		byS := map[string]item{}
		for _, it := range again {
			byS[it[attrSK].(*types.AttributeValueMemberS).Value] = it
		}
		back, err := decodeRecord(pk, byS)
		if err != nil {
			t.Fatalf("written record does not read back: %v", err)
		}
		a, _ := json.Marshal(rec)
		b, _ := json.Marshal(back)
		if string(a) != string(b) {
			t.Fatalf("record changed through items:\n%s\n%s", a, b)
		}
	})
}

// TestRecordAtEveryLimitFitsOneItem: the limits of docs/model.md keep every
// item of a record under DynamoDB's 400 KB, in the shape that costs DynamoDB
// the most per JSON byte (lists of one-digit numbers).
func TestRecordAtEveryLimitFitsOneItem(t *testing.T) {
	digits := func(n int) model.Object {
		l := make([]any, n/2-16)
		for i := range l {
			l[i] = json.Number("1")
		}
		return model.Object{"state": "ready", "l": l}
	}
	deps := make([]string, guard.MaxDependencies)
	for i := range deps {
		deps[i] = strings.Repeat("d", model.MaxIDLength-8) + ":main"
	}
	for _, rec := range []*model.Record{
		model.NewLedger(model.ID{Name: "l", Branch: "main"}, 1),
		model.NewGraphSource(model.ID{Name: "g", Branch: "main"}, strings.Repeat("t", guard.MaxSourceTypeBytes), deps, nil, 1),
	} {
		addr := strings.Repeat("a", guard.MaxAddressBytes)
		if rec.Head != nil {
			*rec.Head = model.RefValue(addr, 1)
		}
		*rec.Index = model.RefValue(addr, 1)
		*rec.Status = model.Value{V: 1, Payload: digits(guard.MaxPayloadBytes)}
		cfg := digits(guard.MaxPayloadBytes)
		delete(cfg, "state")
		*rec.Config = model.Value{V: 1, Payload: cfg}
		if err := guard.CheckRecord(rec); err != nil {
			t.Fatalf("%s: not at the limits but over them: %v", rec.ID, err)
		}
		items, err := recordItems(rec, 1, "inc")
		if err != nil {
			t.Fatalf("%s: %v", rec.ID, err)
		}
		total := 0
		for _, it := range items {
			total += itemSize(it)
		}
		// Items are written in one transaction; DynamoDB bounds each item,
		// and 4 MB the transaction: the whole record under one item's size
		// is the stronger promise.
		if total > MaxItemSize {
			t.Fatalf("%s: a record at every limit is %d bytes of items, over %d", rec.ID, total, MaxItemSize)
		}
		t.Logf("%s at every limit: %d bytes of items (limit %d)", rec.ID, total, MaxItemSize)
	}
}
