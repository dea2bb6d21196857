package docstore

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/faultproxy"
	"nameservice.dev/nameservice/internal/testenv"
)

// TestLostAnswers loses the answer of each write at a proxy in front of
// DynamoDB Local while another client purges (and creates again) the record.
// The answer lost is that of the write that decides the operation (see
// decidingProxy).
func TestLostAnswers(t *testing.T) {
	conformance.RunLostAnswers(t, lossyHarness(deciding))
}

// lossyHarness opens plain clients of the test table and lossy ones through
// a proxy that loses the answer of a write when losable says it may and the
// test's lose function agrees.
func lossyHarness(losable func(op string, body []byte) bool) conformance.AnswerLoser {
	return conformance.LossyHarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		u := dynamoURL(t)
		open := func(ctx context.Context) (driver.Driver, error) { return openURL(ctx, u) }
		lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
			proxy, err := losingProxy(t, testenv.DynamoDBEndpoint(t), losable, lose)
			if err != nil {
				return nil, err
			}
			return openURL(ctx, tableURL(tableName, proxy))
		}
		return open, lossy, nil
	})
}

// deciding reports whether a DynamoDB request is a write that decides an
// operation of this driver: a conditional Replace (PutItem on a revision)
// of a concern document (a push, a retract), of a meta document (a create's
// commit, a purge's mark). A create's claim and concern documents
// (PutItems if absent) come before its commit and are invisible until it; a
// purge's removals (DeleteItems) come after its mark. TestLostCreateSteps
// loses the claim's and the concern documents' answers.
func deciding(op string, body []byte) bool {
	return op == "PutItem" && !bytes.Contains(body, []byte("attribute_not_exists"))
}

// losingProxy starts a fault proxy to target that, after the server
// answered a write for which losable reports true with success, calls lose
// and loses the answer when it returns true (see faultproxy.Config.Lose).
// It closes when the test ends.
func losingProxy(t *testing.T, target string, losable func(op string, body []byte) bool, lose func() bool) (string, error) {
	var marked sync.Map // *http.Request → true: losable
	p, err := faultproxy.Start(faultproxy.Config{
		Target: target,
		Forwarded: func(r *http.Request, body []byte, status int) {
			_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
			if status < 300 && losable(op, body) {
				marked.Store(r, true)
			}
		},
		Lose: func(r *http.Request) bool {
			_, ok := marked.LoadAndDelete(r)
			return ok && lose()
		},
	})
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = p.Close() })
	return p.URL(), nil
}

// TestLostCreateSteps loses the answers of every create-if-absent write of
// a create (its claim and its concern documents): the creator finds its
// own documents by their generation, and the create is done, once.
func TestLostCreateSteps(t *testing.T) {
	ctx := context.Background()
	u := dynamoURL(t)
	var lost atomic.Int32
	proxy, err := losingProxy(t, testenv.DynamoDBEndpoint(t), func(op string, body []byte) bool {
		return op == "PutItem" && !deciding(op, body)
	}, func() bool { lost.Add(1); return true })
	if err != nil {
		t.Fatal(err)
	}
	lossy, err := openURL(ctx, tableURL(tableName, proxy))
	if err != nil {
		t.Fatal(err)
	}
	defer lossy.Close()
	plain, err := openURL(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	id := testID(t)
	rec := driver.NewLedger(id, 1)
	if err := lossy.Create(driver.WithWrite(ctx, driver.Write{ID: "create-1"}), rec.Clone()); err != nil {
		t.Fatalf("create whose claim and documents lost their answers: %v; want done", err)
	}
	if n := lost.Load(); n < 5 {
		t.Fatalf("%d answers lost; want at least 5: the claim and 4 concern documents", n)
	}
	got, err := plain.Get(ctx, id)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("record: %+v, %v; want %+v", got, err, rec)
	}
	meta, err := plain.getOne(ctx, keyDoc(id, skMeta))
	if err != nil || meta.Gen != "create-1" {
		t.Fatalf("meta document: %+v, %v; want generation create-1, the create's write ID", meta, err)
	}
}
