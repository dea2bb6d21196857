package dynamodb_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// TestLostAnswers loses the answer of each write at a proxy in front of
// DynamoDB Local while another client purges (and creates again) the record.
func TestLostAnswers(t *testing.T) {
	conformance.RunLostAnswers(t, conformance.LossyHarnessFunc(func(ctx context.Context, t *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		cfg := testConfig(t)
		open := func(ctx context.Context) (driver.Driver, error) { return dynamodb.Open(ctx, cfg) }
		lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
			url, err := testenv.LossyProxy(t, cfg.Endpoint, lose)
			if err != nil {
				return nil, err
			}
			c := cfg
			c.Endpoint = url
			return dynamodb.Open(ctx, c)
		}
		return open, lossy, nil
	}))
}

// brokenAnswer sends every request to the server; the answer to the first
// UpdateItem after arm comes back with the server's status and headers, but
// its body breaks off with the error a connection closed in the middle of
// it gives. Before returning that answer it runs gap: the write has landed.
type brokenAnswer struct {
	base  http.RoundTripper
	armed atomic.Bool
	gap   func()
}

func (b *brokenAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.base.RoundTrip(r)
	if err != nil || !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem") || !b.armed.CompareAndSwap(true, false) {
		return resp, err
	}
	b.gap()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	broken := &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(broken)))
	return resp, nil
}

// TestBrokenAnswerBodyIsALostAnswer: a push answered 200 whose body breaks
// off has landed. Meanwhile another client purges the record and creates
// it again. The push must not be sent again blindly (the SDK retries a
// broken connection): it would land a second time, on the new record, and
// be answered applied. It is a lost answer, settled from what the table
// holds: outcome unknown, and the new record's head untouched.
func TestBrokenAnswerBodyIsALostAnswer(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	other := nameservice.New(openWith(t, cfg))
	broken := &brokenAnswer{base: http.DefaultTransport.(*http.Transport).Clone()}
	cfg.HTTPClient = &http.Client{Transport: broken, Timeout: time.Minute}
	pusher := nameservice.New(openWith(t, cfg))
	id := "broken" + testenv.RandomHex(4) + "/db:main"
	must(t, pusher.Init(ctx, id))
	broken.gap = func() {
		must(t, other.Purge(ctx, id))
		must(t, other.Init(ctx, id))
	}
	broken.armed.Store(true)

	out, err := pusher.PublishCommit(ctx, id, 5, "c5")
	if !errors.Is(err, model.ErrOutcomeUnknown) {
		t.Errorf("push whose answer broke off, beside a purge and a create: %+v, %v; want outcome unknown", out, err)
	}
	rec, err := other.Lookup(ctx, id)
	must(t, err)
	if rec.Head != nil && rec.Head.V != 0 {
		t.Errorf("the record created again has head %+v: the push landed on it too", *rec.Head)
	}
}
