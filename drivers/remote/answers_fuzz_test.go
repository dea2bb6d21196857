package remote_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/remote"
	"nameservice.dev/nameservice/model"
)

// FuzzAnswers serves arbitrary answers, as a broken server or a proxy in
// between might, to every call of the driver: each is an error or a
// result, never a panic.
func FuzzAnswers(f *testing.F) {
	f.Add(uint8(200), `{"records":[{"id":"a:main","kind":"ledger","head":{"v":0},"index":{"v":0},"status":{"v":1,"payload":{"state":"ready"}},"config":{"v":0}}],"failed":[{"id":"b:main","code":"Internal"}],"next_page_token":"x"}`)
	f.Add(uint8(200), `{"records":[null]}`)
	f.Add(uint8(200), `{"applied":true,"current":{"v":1,"payload":{"address":"a","t":1}}}`)
	f.Add(uint8(209), `{"applied":false,"current":null}`)
	f.Add(uint8(200), `{"head":null,"index":{"v":0}}`)
	f.Add(uint8(201), `{"id":"a:b","kind":"ledger"}`)
	f.Add(uint8(200), "event: record\ndata: null\n\nevent: synced\ndata: {}\n\nevent: change\ndata: {\"id\":\"a:main\",\"concern\":\"head\",\"new\":null}\n\n")
	f.Add(uint8(200), "event: synced\ndata: {}\n\nevent: change\ndata: {\"id\":\"a:main\",\"concern\":\"head\",\"old\":0,\"new\":{\"v\":1}}\n\n")
	var answer atomic.Pointer[[2]any]
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answer.Load()
		w.WriteHeader(a[0].(int))
		_, _ = w.Write([]byte(a[1].(string)))
	}))
	f.Cleanup(hs.Close)
	d, err := remote.Open(context.Background(), remote.Config{BaseURL: hs.URL, MaxAttempts: 1, Timeout: 5 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	id, _ := model.ParseID("a:main")
	branch, _ := model.ParseID("a:b")
	f.Fuzz(func(t *testing.T, status uint8, body string) {
		code := 200 + int(status)%10 // 200..209, so that 201, 204 and 209 (as 409) occur
		if code == 209 {
			code = 409
		}
		answer.Store(&[2]any{code, body})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = d.Get(ctx, id)
		_, _ = d.Heads(ctx, id)
		if p, err := d.List(ctx, driver.ListOptions{}); err == nil {
			for _, r := range p.Records {
				_ = r.ID.String()
			}
		}
		_, _ = d.Update(ctx, id, model.Head, driver.Condition{Kind: driver.Above}, model.RefValue("a", 1))
		_, _ = d.CreateBranch(ctx, &model.Record{ID: branch, Meta: model.Meta{Kind: model.Ledger, SourceBranch: "main"}})
		_, _ = d.ResetHead(ctx, id, model.RefValue("a", 1), nil)
		wctx, wcancel := context.WithCancel(ctx)
		if ch, err := d.Watch(wctx, driver.WatchOptions{}); err == nil {
			wcancel()
			for range ch {
			}
		}
		wcancel()
	})
}
