package s3etag_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// TestLockTakeover: a holder took the lock for the head's current ETag and
// died before writing. Two writers then race a compare-and-set from that
// value: both wait out timeout × skew, exactly one takes the lock over
// with generation 2 and writes, the other sees the new value and reports a
// conflict. No update is lost or applied twice.
func TestLockTakeover(t *testing.T) {
	endpoint, bucket := newBucket(t)
	lc := newLockTable(t, time.Second) // skew 2: takeover after 2 s
	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	cfg.Prefix = "tk"
	cfg.Lock = lc
	ctx := context.Background()
	d1, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	id := model.ID{Name: "db", Branch: "main"}
	if err := d1.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	start := model.RefValue("c1", 1)
	if out, err := d1.Update(ctx, id, model.Head, driver.IfAbove(), start); err != nil || !out.Applied {
		t.Fatalf("publish: %v %v", out, err)
	}
	objKey := "tk/ns@v2/db/main.json"
	etag := headETag(t, d1, objKey)
	lockClient, err := s3etag.NewLockClient(ctx, *lc)
	if err != nil {
		t.Fatal(err)
	}
	path, sk := s3etag.LockKey(bucket, objKey, etag)
	deadHolder(t, lockClient, lc.Table, path, sk)

	began := time.Now()
	outs := make([]driver.Outcome, 2)
	var wg sync.WaitGroup
	for i, d := range []*s3etag.Driver{d1, d2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			outs[i], err = d.Update(ctx, id, model.Head, driver.IfEquals(start), model.RefValue("w"+strconv.Itoa(i), 2))
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if took := time.Since(began); took < 2*time.Second {
		t.Errorf("writers finished after %v, before the dead holder's timeout × skew (2s)", took)
	}
	if outs[0].Applied == outs[1].Applied {
		t.Fatalf("outcomes %+v: want exactly one applied", outs)
	}
	winner := outs[0]
	if outs[1].Applied {
		winner = outs[1]
	}
	for _, o := range outs {
		if !o.Current.Equal(winner.Current) {
			t.Errorf("outcome current %v, want the winner's %v", o.Current, winner.Current)
		}
	}
	rec, err := d1.Get(ctx, id)
	if err != nil || !rec.Head.Equal(winner.Current) {
		t.Fatalf("head = %v (%v), want %v", rec.Head, err, winner.Current)
	}
	if g := generation(t, lockClient, lc.Table, path, sk); g != 2 {
		t.Errorf("lock generation after takeover = %d, want 2", g)
	}
}

func headETag(t *testing.T, d *s3etag.Driver, key string) string {
	t.Helper()
	bucket := d.Bucket()
	out, err := d.Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(*out.ETag, `"`)
}

// deadHolder writes the lock record of a holder that never finishes.
func deadHolder(t *testing.T, client *dynamodb.Client, table, path, sk string) {
	t.Helper()
	_, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		"path": &types.AttributeValueMemberS{Value: path}, "etag": &types.AttributeValueMemberS{Value: sk},
		"generation": &types.AttributeValueMemberN{Value: "1"}, "timeout": &types.AttributeValueMemberN{Value: "1000"},
		"ttl":      &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)},
		"released": &types.AttributeValueMemberBOOL{Value: false},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func generation(t *testing.T, client *dynamodb.Client, table, path, sk string) int64 {
	t.Helper()
	out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, ConsistentRead: new(true), Key: map[string]types.AttributeValue{
		"path": &types.AttributeValueMemberS{Value: path}, "etag": &types.AttributeValueMemberS{Value: sk},
	}})
	if err != nil || out.Item == nil {
		t.Fatalf("lock record: %v %v", out, err)
	}
	g, _ := strconv.ParseInt(out.Item["generation"].(*types.AttributeValueMemberN).Value, 10, 64)
	return g
}

// TestLockAnswersLost: the answer of a create's lock acquire is lost after
// it landed, and its release is lost before it landed, each attempt cut
// by the lock client's 5 s bound and sent again by the SDK. The acquire
// knows the lock it then finds held as its own (generation 1, no takeover
// after timeout × skew), and the release is sent again until it lands, so
// the next writer of the key need not wait for a takeover.
func TestLockAnswersLost(t *testing.T) {
	t.Parallel()
	endpoint, bucket := newBucket(t)
	lc := newLockTable(t, 15*time.Second)
	target, err := url.Parse(lc.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var acquires, releases atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		switch {
		case bytes.Contains(body, []byte("SET #r = :true")) && releases.Add(1) == 1:
			<-r.Context().Done() // held until the client gives up: never sent on
			return
		case bytes.Contains(body, []byte("if_not_exists(#g")) && acquires.Add(1) == 1:
			forward.ServeHTTP(httptest.NewRecorder(), r.WithContext(context.WithoutCancel(r.Context()))) // lands
			<-r.Context().Done()                                                                         // its answer lost
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	direct, slow := *lc, *lc
	slow.Endpoint = proxy.URL
	cfg := baseConfig(endpoint, bucket, jsonld.LayoutB)
	cfg.Prefix = "lost"
	cfg.Lock = &slow
	ctx := context.Background()
	d, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Create(ctx, model.NewLedger(model.ID{Name: "db", Branch: "main"}, 1)); err != nil {
		t.Fatal(err)
	}
	if acquires.Load() < 2 || releases.Load() < 2 {
		t.Fatalf("the proxy saw %d acquires and %d releases, want the first of each lost and sent again", acquires.Load(), releases.Load())
	}
	lockClient, err := s3etag.NewLockClient(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	path, sk := s3etag.LockKey(bucket, "lost/ns@v2/db/main.json", "")
	out, err := lockClient.GetItem(ctx, &dynamodb.GetItemInput{TableName: &lc.Table, ConsistentRead: new(true), Key: map[string]types.AttributeValue{
		"path": &types.AttributeValueMemberS{Value: path}, "etag": &types.AttributeValueMemberS{Value: sk},
	}})
	if err != nil || out.Item == nil {
		t.Fatalf("lock record of the create: %v %v", out, err)
	}
	if g := generation(t, lockClient, lc.Table, path, sk); g != 1 {
		t.Errorf("lock generation = %d, want 1: the create waited out its own lease and took its lock over", g)
	}
	if released, _ := out.Item["released"].(*types.AttributeValueMemberBOOL); released == nil || !released.Value {
		t.Errorf("the create's lock is still held after its release was sent again: the next writer would wait %v for a takeover", 2*lc.Timeout)
	}
}
