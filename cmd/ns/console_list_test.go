package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"nameservice.dev/nameservice"
)

// The console's listing (issue 37, item 6) in headless Chromium, over
// ns serve on a file store: filters, pages past 5,000 records, a ledger's
// branches with their sources and counts, retracted records on request, a
// new branch without an index, a narrow screen, and the static views
// without JavaScript.

const (
	bulkRecords = 5200
	xssBranch   = "shop:<b>bold</b>"
)

// listingFixture writes bulkRecords ledgers bulk/db-NNNNN, and shop with
// branches: main (head 12, index 10), dev from main (no index), hotfix
// from dev at t8 (no index, head 9), a branch whose name holds markup; a
// retracted ledger shop-old and a graph source shop-search.
func listingFixture(t *testing.T) (dir string) {
	dir = t.TempDir()
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, "file://"+dir)
	must(t, err)
	defer ns.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < bulkRecords; i += 8 {
				if err := ns.Init(ctx, fmt.Sprintf("bulk/db-%05d", i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	must(t, <-errs)
	ok := func(_ nameservice.Outcome, err error) { must(t, err) }
	must(t, ns.Init(ctx, "shop"))
	ok(ns.PublishCommit(ctx, "shop", 12, "fluree:file://shop/t12"))
	ok(ns.PublishIndex(ctx, "shop", 10, "fluree:file://shop/i10"))
	_, err = ns.CreateBranch(ctx, "shop:dev", nameservice.BranchOptions{})
	must(t, err)
	_, err = ns.CreateBranch(ctx, "shop:hotfix", nameservice.BranchOptions{From: "dev", At: &nameservice.Ref{Address: "fluree:file://shop/t8", T: 8}})
	must(t, err)
	ok(ns.PublishCommit(ctx, "shop:hotfix", 9, "fluree:file://shop/hotfix-t9"))
	rec, err := ns.Lookup(ctx, "shop:hotfix")
	must(t, err)
	x := *rec
	x.ID.Branch = strings.TrimPrefix(xssBranch, "shop:")
	must(t, ns.Import(ctx, &x)) // a name no new branch may take, as another writer left it
	must(t, ns.Init(ctx, "shop-old"))
	must(t, ns.Retract(ctx, "shop-old"))
	must(t, ns.PublishGraphSource(ctx, "shop-search", "db:Bm25Index", []string{"shop"}, nil))
	return dir
}

func TestConsoleListingInBrowser(t *testing.T) {
	path := chromium(t)
	dir := listingFixture(t)
	bin := buildNS(t)
	srv := startServe(t, bin, "file://"+dir, "--insecure-no-auth", "--poll-interval", "100ms")
	ctx := browser(t, path)
	shots := os.Getenv("NS_UI_SCREENSHOTS")
	rowIDs := `Array.from(document.querySelectorAll("#records tbody tr")).map(r => r.dataset.id)`

	// Pages past 5,000 records: each page links to the next, to the end.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ui"), chromedp.WaitVisible(chromedp.ID("records"))))
	ids := eval[[]string](t, ctx, rowIDs)
	size, page := len(ids), 1
	if size == 0 || size >= 5000 {
		t.Fatalf("the first page holds %d rows", size)
	}
	for eval[bool](t, ctx, `document.getElementById("next-page") !== null`) {
		must(t, chromedp.Do(ctx, chromedp.Click(chromedp.ID("next-page")), chromedp.WaitVisible(chromedp.ID("first-page"))))
		page++
		ids = eval[[]string](t, ctx, rowIDs)
		if want := fmt.Sprintf("bulk/db-%05d:main", (page-1)*size); len(ids) == 0 || ids[0] != want {
			t.Fatalf("page %d starts at %v, want %s", page, first(ids), want)
		}
	}
	if (page-1)*size < 5000 {
		t.Fatalf("%d pages of %d rows do not go past 5,000 records", page, size)
	}
	want := []string{"bulk/db-05199:main", "shop-search:main", "shop:<b>bold</b>", "shop:dev", "shop:hotfix", "shop:main"}
	if got := ids[max(0, len(ids)-len(want)):]; len(ids) != bulkRecords+5-(page-1)*size || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the last page: %d rows ending %v", len(ids), got)
	}
	if summary := eval[string](t, ctx, `document.querySelector(".summary").textContent`); !strings.Contains(summary, fmt.Sprintf("page %d (from record %d)", page, (page-1)*size+1)) {
		t.Errorf("page %d says %q", page, summary)
	}

	// A filter: ID prefix and kind; retracted ones on request.
	filter := func(prefix, kind string, retracted bool) []string {
		t.Helper()
		steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(srv.URL + "/ui"), chromedp.WaitVisible(chromedp.ID("filter")),
			chromedp.SetValue(chromedp.CSS(`[name=prefix]`), prefix), chromedp.SetValue(chromedp.CSS(`[name=kind]`), kind)}
		if retracted {
			steps = append(steps, chromedp.Click(chromedp.CSS(`[name=retracted]`)))
		}
		steps = append(steps, chromedp.Submit(chromedp.ID("filter")))
		must(t, chromedp.Do(ctx, steps...))
		// The filtered page has loaded once its address holds the filter.
		query := `(() => { const q = new URLSearchParams(location.search); return q.get("prefix") + "|" + q.get("kind") + "|" + q.get("retracted") })()`
		want := prefix + "|" + kind + "|null"
		if retracted {
			want = prefix + "|" + kind + "|1"
		}
		if _, err := waitText(ctx, query, want, time.Minute); err != nil {
			t.Fatal(err)
		}
		must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("records"))))
		return eval[[]string](t, ctx, rowIDs)
	}
	if got := strings.Join(filter("shop", "ledger", false), ","); got != "shop:<b>bold</b>,shop:dev,shop:hotfix,shop:main" {
		t.Errorf("prefix shop, kind ledger: %s", got)
	}
	if got := strings.Join(filter("shop", "ledger", true), ","); got != "shop-old:main,shop:<b>bold</b>,shop:dev,shop:hotfix,shop:main" {
		t.Errorf("prefix shop, kind ledger, retracted too: %s", got)
	}
	if cls := eval[string](t, ctx, `document.querySelector('#records tr[data-id="shop-old:main"]').className`); cls != "retracted" {
		t.Errorf("the retracted row's class is %q", cls)
	}
	if got := strings.Join(filter("shop-s", "graph_source", false), ","); got != "shop-search:main" {
		t.Errorf("prefix shop-s, kind graph_source: %s", got)
	}
	// A state: the backend selects it, and the next page keeps it.
	push := func(args ...string) {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"--url", "file://" + dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ns %v: %v\n%s", args, err, out)
		}
	}
	push("push-status", "shop:hotfix", "--expect-v", "1", "indexing")
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ui?prefix=shop&state=indexing"), chromedp.WaitVisible(chromedp.ID("records"))))
	if got := strings.Join(eval[[]string](t, ctx, rowIDs), ","); got != "shop:hotfix" {
		t.Errorf("prefix shop, state indexing: %s, want shop:hotfix alone", got)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ui?prefix=bulk/&state=ready"), chromedp.WaitVisible(chromedp.ID("next-page"))))
	if v := eval[string](t, ctx, `document.querySelector("[name=state]").value + " " + document.getElementById("next-page").getAttribute("href")`); !strings.HasPrefix(v, "ready /ui?") || !strings.Contains(v, "state=ready") {
		t.Errorf("the state filter is not kept: %q", v)
	}

	// A filtered page takes live changes of its records only.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ui?prefix=shop&kind=ledger"), chromedp.WaitVisible(chromedp.ID("live"))))
	push("publish-commit", "bulk/db-00001", "5", "fluree:file://bulk/t5")
	push("publish-commit", "shop", "13", "fluree:file://shop/t13")
	if _, err := waitText(ctx, cell("shop:main", "head_t"), "13", time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#records tbody tr").length`); n != 4 {
		t.Errorf("a change outside the filter added a row: %d rows", n)
	}
	// A new branch without an index is not behind by its whole head.
	for id, gap := range map[string]string{"shop:main": "3", "shop:dev": "no index yet", "shop:hotfix": "1 since branching"} {
		if got := eval[string](t, ctx, cell(id, "gap_text")); got != gap {
			t.Errorf("gap of %s = %q, want %q", id, got, gap)
		}
	}
	if behind := eval[bool](t, ctx, `document.querySelector('#records tr[data-id="shop:dev"] [data-f=gap_text]').classList.contains("behind")`); behind {
		t.Error("shop:dev, without an index of its own, shows as behind")
	}
	screenshot(t, ctx, shots, "console-filter.png")

	// A ledger's branches, with their sources and counts; markup in a name
	// is text.
	must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/ui/record/shop:main"), chromedp.WaitVisible(chromedp.ID("branches"))))
	rows := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#branches tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent).join("|"))`)
	wantRows := []string{"<b>bold</b>|dev|9|–|1 since branching|0|false", "dev|main|12|–|no index yet|1|false", "hotfix|dev|9|–|1 since branching|0|false", "main|–|13|10|3|1|false"}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("branches of shop:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#branches b").length`); n != 0 {
		t.Errorf("a branch name's markup became %d elements", n)
	}
	if hint := eval[string](t, ctx, `document.querySelector("main").textContent`); !strings.Contains(hint, "This backend keeps no time of change per concern") {
		t.Error("the record page does not say that a file store keeps no change times")
	}
	screenshot(t, ctx, shots, "console-branches.png")

	consoleNarrow(t, path, srv.URL, shots)
	consoleListingWithoutJS(t, path, srv.URL)
}

func first(ids []string) []string { return ids[:min(3, len(ids))] }

// consoleNarrow: on a phone's width no page is wider than the screen (the
// tables scroll within their box).
func consoleNarrow(t *testing.T, path, url, shots string) {
	ctx := browser(t, path)
	must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetDeviceMetricsOverride,
			emulation.SetDeviceMetricsOverrideParams{Width: 375, Height: 740, DeviceScaleFactor: 2, Mobile: true})
		return err
	})))
	for _, page := range []string{"/ui?prefix=shop", "/ui/record/shop:hotfix", "/ui/lag", "/ui"} {
		must(t, chromedp.Do(ctx, chromedp.Navigate(url+page), chromedp.WaitVisible(chromedp.CSS("main"))))
		if w := eval[[]int](t, ctx, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
			t.Errorf("%s on a 375px screen is %dpx wide", page, w[0])
		}
		if page == "/ui?prefix=shop" {
			screenshot(t, ctx, shots, "console-narrow.png")
		}
	}
}

// consoleListingWithoutJS: with scripts off the filter and the pages work
// (a form and links the server answers).
func consoleListingWithoutJS(t *testing.T, path, url string) {
	ctx := browser(t, path)
	must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})))
	must(t, chromedp.Do(ctx, chromedp.Navigate(url+"/ui"), chromedp.WaitVisible(chromedp.ID("filter")),
		chromedp.SendKeys(chromedp.CSS(`[name=prefix]`), "shop:\r"),
		chromedp.WaitVisible(chromedp.CSS(`#records tr[data-id="shop:hotfix"]`)))) // on the filtered page only
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("records")))
	must(t, err)
	if !strings.Contains(text, "shop:hotfix") || strings.Contains(text, "bulk/") || strings.Contains(text, "shop-search") {
		t.Errorf("without JavaScript, prefix shop: lists:\n%s", text)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(url+"/ui?prefix=bulk/"), chromedp.WaitVisible(chromedp.ID("next-page")),
		chromedp.Click(chromedp.ID("next-page")), chromedp.WaitVisible(chromedp.ID("first-page"))))
	text, err = chromedp.Run(ctx, chromedp.Text(chromedp.ID("records")))
	must(t, err)
	if strings.Contains(text, "bulk/db-00000:main") || !strings.Contains(text, "bulk/") {
		t.Error("without JavaScript the next page is not the next records")
	}
}

// TestConsoleClosesStreamsOfPagesLeft: each console page keeps a stream
// of changes open; one the browser left must close it, or after six pages
// (a browser's connections per host) the next one waits for a stream to
// time out. After each of ten page loads in one tab, the server holds one
// stream: the page shown.
func TestConsoleClosesStreamsOfPagesLeft(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	dir := t.TempDir()
	ns, err := nameservice.Open(context.Background(), "file://"+dir)
	must(t, err)
	must(t, ns.Init(context.Background(), "shop"))
	must(t, ns.Close())
	srv := startServe(t, buildNS(t), "file://"+dir, "--insecure-no-auth")
	ctx := browser(t, path)
	pages := []string{"/ui", "/ui/lag", "/ui/record/shop:main"}
	for i := range 10 {
		must(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+pages[i%len(pages)]), chromedp.WaitVisible(chromedp.ID("live"))))
		if err := waitStreams(srv.URL, 1); err != nil {
			t.Fatalf("after page load %d (%s): %v", i+1, pages[i%len(pages)], err)
		}
	}
}

// waitStreams waits until the server at url reports n event streams open
// (nameservice_sse_subscribers): a stream closes when the server sees its
// connection go, which takes a moment, and it may take as long as it
// likes: without the close it never comes.
func waitStreams(url string, n int) error {
	want := fmt.Sprintf("nameservice_sse_subscribers %d\n", n)
	var last string
	for range 600 {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if strings.Contains(string(b), want) {
			return nil
		}
		if i := strings.Index(string(b), "\nnameservice_sse_subscribers "); i >= 0 {
			last = strings.SplitN(string(b[i+1:]), "\n", 2)[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the server still reports %q, want %d stream(s) open", last, n)
}
