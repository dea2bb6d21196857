package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/lease"
	"nameservice.dev/nameservice/server/auth"
)

// chromium returns the path of a Chromium or Chrome, skipping the test
// when there is none, or failing it in CI (scripts/test.sh installs
// Debian's chromium).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium to drive: install Debian's chromium (apt-get install chromium); scripts/test.sh does"
	if testenv.Required() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium with a fresh profile (no cookies) and
// returns a context for chromedp actions in it.
func browser(t *testing.T, path string) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, cancelT := context.WithTimeout(ctx, 10*time.Minute) // a bound for a hung browser, not a speed
	must(t, chromedp.Do(ctx))                                // start the browser and open the tab
	// An alert, confirm or prompt would mean a page ran script it was shown.
	must(t, chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			t.Errorf("the page opened a JavaScript dialog: %q", d.Message)
		}
	}))
	t.Cleanup(cancelT)
	return ctx
}

const xssID = "tenant-a/<script>window.pwned=1</script>:main"

// consoleFixture is a file nameservice with a few records, and ns serve
// over it with two tokens: admin reads everything, tenant reads tenant-a/.
type consoleFixture struct {
	dir, url string
	bin      string
	srv      *serveProcess
}

func newConsoleFixture(t *testing.T) *consoleFixture {
	f := &consoleFixture{dir: t.TempDir(), bin: buildNS(t)}
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, "file://"+f.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	for _, id := range []string{"tenant-a/books", "tenant-a/lagging", "tenant-b/secret", xssID} {
		if err := ns.Init(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ok := func(_ nameservice.Outcome, err error) { must(t, err) }
	ok(ns.PublishCommit(ctx, "tenant-a/books", 3, "fluree:file://books/c3"))
	ok(ns.PublishCommit(ctx, "tenant-a/lagging", 90, "fluree:file://lagging/c90"))
	ok(ns.PublishIndex(ctx, "tenant-a/lagging", 40, "fluree:file://lagging/i40"))
	ok(ns.PublishCommit(ctx, "tenant-b/secret", 12, "fluree:file://secret/c12"))
	if _, err := lease.Acquire(ctx, ns, "tenant-a/books", lease.Options{Name: "index", Holder: "indexer-7", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	tf := auth.TokenFile{Tokens: []auth.TokenEntry{
		{Name: "admin", SHA256: auth.HashToken("admin-token"), Read: []string{""}},
		{Name: "tenant-a", SHA256: auth.HashToken("tenant-token"), Read: []string{"tenant-a/"}},
	}}
	b, _ := json.Marshal(tf)
	if err := os.WriteFile(tokens, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f.srv = startServe(t, f.bin, "file://"+f.dir, "--tokens", tokens, "--poll-interval", "100ms")
	f.url = f.srv.URL
	return f
}

// push runs ns in its own process against the backend directly.
func (f *consoleFixture) push(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(f.bin, append([]string{"--url", "file://" + f.dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ns %v: %v\n%s", args, err, out)
	}
}

func login(url, token string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(url+"/ui"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("records")),
		chromedp.WaitVisible(chromedp.ID("live")), // the event stream is open
	)
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	must(t, err)
	return v
}

// cell returns the text of field f in the records table's row of id.
func cell(id, f string) string {
	return fmt.Sprintf(`(() => { const r = Array.from(document.querySelectorAll("#records tr[data-id]")).find(r => r.dataset.id === %q);
		return r ? r.querySelector('[data-f=%q]').textContent : null })()`, id, f)
}

// uiPatience is how long the console tests wait for the page to show a
// change (it shows within about a poll interval, 100ms; a loaded machine
// may be seconds late, which is no failure).
const uiPatience = 30 * time.Second

// waitText polls a JavaScript expression until it yields want, for at most d.
func waitText(ctx context.Context, expr, want string, d time.Duration) (time.Duration, error) {
	start := time.Now()
	var got *string
	for time.Since(start) < d {
		var err error
		if got, err = chromedp.Run(ctx, chromedp.Evaluate[*string](expr)); err != nil {
			return 0, err
		}
		if got != nil && *got == want {
			return time.Since(start), nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, fmt.Errorf("%s is %v after %v, want %q", expr, got, d, want)
}

func TestConsoleInBrowser(t *testing.T) {
	t.Parallel() // long: runs beside the other long tests
	path := chromium(t)
	f := newConsoleFixture(t)
	ctx := browser(t, path)
	shots := os.Getenv("NS_UI_SCREENSHOTS") // a directory: save the screenshots of docs/serve.md there

	// Every record appears, with head t, index t, gap, status and lease.
	must(t, chromedp.Do(ctx, login(f.url, "admin-token")))
	for expr, want := range map[string]string{
		cell("tenant-a/books:main", "head_t"):     "3",
		cell("tenant-a/lagging:main", "gap_text"): "50",
		cell("tenant-b/secret:main", "head_t"):    "12",
		cell(xssID, "id"):                         xssID,
	} {
		if _, err := waitText(ctx, expr, want, uiPatience); err != nil {
			t.Error(err)
		}
	}
	if lease := eval[string](t, ctx, cell("tenant-a/books:main", "lease")); !strings.HasPrefix(lease, "index: indexer-7 until ") {
		t.Errorf("lease cell %q", lease)
	}
	// The <script> in an ID is text: not run, not an element.
	pwned := eval[bool](t, ctx, `window.pwned === 1`)
	scripts := eval[int](t, ctx, `document.querySelectorAll("script").length`)
	if pwned || scripts != 1 {
		t.Errorf("an ID's <script> ran (%v) or became an element (%d script elements, want console.js alone)", pwned, scripts)
	}
	screenshot(t, ctx, shots, "console-records.png")

	// A push in another process shows.
	f.push(t, "publish-commit", "tenant-a/books", "42", "fluree:file://books/c42")
	took, err := waitText(ctx, cell("tenant-a/books:main", "head_t"), "42", uiPatience)
	if err != nil {
		t.Fatalf("push from another process: %v", err)
	}
	t.Logf("a push in another process showed after %v", took)
	if _, err := waitText(ctx, cell("tenant-a/books:main", "gap_text"), "42", uiPatience); err != nil {
		t.Error(err)
	}
	// A record created by another process gets a row.
	f.push(t, "init", "tenant-a/new")
	if _, err := waitText(ctx, cell("tenant-a/new:main", "status"), "ready", uiPatience); err != nil {
		t.Error(err)
	}

	consoleRecordPage(t, ctx, f, shots)
	consoleLagChart(t, ctx, f, shots)
	consoleScoped(t, path, f)
	consoleWithoutJS(t, path, f)
}

// consoleWithoutJS: with scripts off, the sign-in form, the records and a
// record's page still work (they are rendered by the server), and the
// page does not claim to be live.
func consoleWithoutJS(t *testing.T, path string, f *consoleFixture) {
	ctx := browser(t, path)
	must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})))
	must(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"/ui"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "admin-token\r"), chromedp.WaitVisible(chromedp.ID("records"))))
	rows, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("records")))
	must(t, err)
	for _, s := range []string{"tenant-a/lagging:main", "tenant-b/secret:main", xssID, "indexer-7"} {
		if !strings.Contains(rows, s) {
			t.Errorf("without JavaScript the records table lacks %q:\n%s", s, rows)
		}
	}
	// With scripts on, the event stream opens within milliseconds and
	// the script unhides the live mark: give it ample time to be wrong.
	time.Sleep(500 * time.Millisecond)
	live, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.ID("live"), "hidden"))
	must(t, err)
	if !live.Exists {
		t.Error("without JavaScript the page shows itself live")
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"/ui/record/tenant-a/lagging:main"), chromedp.WaitVisible(chromedp.ID("concerns"))))
	concerns, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("concerns")))
	must(t, err)
	if !strings.Contains(concerns, "fluree:file://lagging/i40") {
		t.Errorf("without JavaScript the record page shows:\n%s", concerns)
	}
}

// consoleRecordPage: a record's page shows its concerns, and each change
// since it opened as a line of history.
func consoleRecordPage(t *testing.T, ctx context.Context, f *consoleFixture, shots string) {
	must(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"/ui/record/tenant-a/books:main"),
		chromedp.WaitVisible(chromedp.ID("concerns")), chromedp.WaitVisible(chromedp.ID("live"))))
	concerns := eval[string](t, ctx, `document.getElementById("concerns").textContent`)
	for _, s := range []string{"head", "index", "status", "config", "fluree:file://books/c42", "indexer-7"} {
		if !strings.Contains(concerns, s) {
			t.Errorf("concerns table lacks %q:\n%s", s, concerns)
		}
	}
	f.push(t, "publish-index", "tenant-a/books", "40", "fluree:file://books/i40")
	f.push(t, "publish-commit", "tenant-a/books", "43", "fluree:file://books/c43")
	deadline := time.Now().Add(uiPatience)
	var lines []string
	for time.Now().Before(deadline) {
		lines = eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#history tbody tr:not(.empty)")).map(r => r.cells[1].textContent + " " + r.cells[2].textContent)`)
		if len(lines) >= 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Join(lines, ",") != "index 40,head 43" {
		t.Errorf("history = %v, want the index push then the head push", lines)
	}
	if gap := eval[string](t, ctx, `document.querySelector('#facts [data-f="gap_text"]').textContent`); gap != "3" {
		t.Errorf("gap on the record page = %q, want 3", gap)
	}
	screenshot(t, ctx, shots, "console-record.png")
}

// consoleLagChart: the chart has a bar per ledger behind, most behind first.
func consoleLagChart(t *testing.T, ctx context.Context, f *consoleFixture, shots string) {
	must(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"/ui/lag"), chromedp.WaitVisible(chromedp.ID("lag"))))
	bars := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#lag g")).map(g => g.dataset.id + "=" + g.querySelector('[data-f="gap_text"]').textContent)`)
	if len(bars) < 3 || bars[0] != "tenant-a/lagging:main=50" {
		t.Errorf("lag bars = %v, want tenant-a/lagging:main=50 first", bars)
	}
	screenshot(t, ctx, shots, "console-lag.png")
	// The bar follows a push made elsewhere.
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("live"))))
	f.push(t, "publish-commit", "tenant-a/lagging", "95", "fluree:file://lagging/c95")
	bar := `(() => { const g = Array.from(document.querySelectorAll("#lag g")).find(g => g.dataset.id === "tenant-a/lagging:main");
		return g.querySelector('[data-f="gap_text"]').textContent })()`
	if _, err := waitText(ctx, bar, "55", uiPatience); err != nil {
		t.Error(err)
	}
}

// consoleScoped: a token scoped to tenant-a/ sees only tenant-a/, live
// changes included, and another tenant's record page answers as missing.
func consoleScoped(t *testing.T, path string, f *consoleFixture) {
	ctx := browser(t, path)
	must(t, chromedp.Do(ctx, login(f.url, "tenant-token")))
	f.push(t, "publish-commit", "tenant-b/secret", "13", "fluree:file://secret/c13")
	f.push(t, "publish-commit", "tenant-a/lagging", "96", "fluree:file://lagging/c96")
	if _, err := waitText(ctx, cell("tenant-a/lagging:main", "head_t"), "96", uiPatience); err != nil {
		t.Fatal(err)
	}
	ids := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#records tbody tr")).map(r => r.dataset.id)`)
	for _, id := range ids {
		if !strings.HasPrefix(id, "tenant-a/") {
			t.Errorf("the tenant-a token sees %q", id)
		}
	}
	if len(ids) != 4 {
		t.Errorf("the tenant-a token sees %d records (%v), want 4", len(ids), ids)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(f.url+"/ui/record/tenant-b/secret:main")))
	body := eval[string](t, ctx, `document.querySelector("main").textContent`)
	if !strings.Contains(body, "no record tenant-b/secret:main") || strings.Contains(body, "secret/c1") {
		t.Errorf("another tenant's record page shows %q", body)
	}
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	must(t, err)
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
