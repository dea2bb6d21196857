package server_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// TestConsoleAuth: the console asks a browser for its token, keeps a good
// one in an HttpOnly, SameSite=Strict cookie, refuses a bad one, and shows
// a scoped token only its scope. Over a real listener; the browser test is
// cmd/ns's TestConsoleInBrowser.
func TestConsoleAuth(t *testing.T) {
	authn, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
		{Name: "tenant", SHA256: auth.HashToken("tenant-token"), Read: []string{"tenant-a/"}},
	}})
	Must(t, err)
	s := Start(t, server.Options{Auth: authn})
	ctx := context.Background()
	for _, id := range []string{"tenant-a/books", "tenant-b/secret"} {
		Must(t, s.NS.Init(ctx, id))
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, cookie string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := noRedirect.Do(req)
		Must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, _ := get("/ui", ""); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login" {
		t.Fatalf("/ui without a token: %d to %q, want 303 to /ui/login", resp.StatusCode, resp.Header.Get("Location"))
	}
	login := func(token string) *http.Response {
		resp, err := noRedirect.PostForm(s.URL+"/ui/login", url.Values{"token": {token}})
		Must(t, err)
		resp.Body.Close()
		return resp
	}
	if resp := login("wrong"); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("a wrong token: %d with cookies %v, want 401 and none", resp.StatusCode, resp.Cookies())
	}
	resp := login("tenant-token")
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly ||
		cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/ui" {
		t.Fatalf("login: %d, cookies %+v", resp.StatusCode, cookies)
	}
	c := cookies[0].Name + "=" + cookies[0].Value
	resp, body := get("/ui", c)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "tenant-a/books:main") || strings.Contains(body, "tenant-b") {
		t.Errorf("records page of a tenant-a token: %d\n%s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if resp, body := get("/ui/record/tenant-b/secret:main", c); resp.StatusCode != http.StatusNotFound || strings.Contains(body, "ready") {
		t.Errorf("another tenant's record: %d\n%s", resp.StatusCode, body)
	}
	if resp, _ := get("/ui/record/tenant-b/absent:main", c); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a missing record: %d", resp.StatusCode)
	}
	if resp, _ := get("/ui/events?id=tenant-b/secret", c); resp.StatusCode != http.StatusNotFound {
		t.Errorf("events of another tenant's record: %d, want 404", resp.StatusCode)
	}
	if resp, _ := get("/ui", "ns_console_token=forged"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged cookie: %d, want 401", resp.StatusCode)
	}
}

// TestConsoleChangeTimes: over DynamoDB, which keeps when each concern's
// item last changed (updated_at_ms), a record's page shows it per concern;
// over a backend that keeps none it says so.
func TestConsoleChangeTimes(t *testing.T) {
	ctx := context.Background()
	table := "ns-ui-times-" + testenv.RandomHex(4)
	d, err := dynamodb.Open(ctx, dynamodb.Config{Table: table, Region: "us-east-1", Endpoint: testenv.DynamoDBEndpoint(t), Credentials: testenv.Credentials})
	Must(t, err)
	Must(t, d.Provision(ctx))
	testenv.DropTable(t, d.Client(), table)
	s := StartOn(t, d, server.Options{})
	before := time.Now().Add(-time.Minute) // DynamoDB Local's clock is this machine's
	Must(t, s.NS.Init(ctx, "mydb"))
	_, err = s.NS.PublishCommit(ctx, "mydb", 3, "fluree:file://c3")
	Must(t, err)
	after := time.Now().Add(time.Minute)
	st, body := s.Call(t, "GET", "/ui/record/mydb:main", "")
	if st != 200 {
		t.Fatalf("record page: %d\n%s", st, body)
	}
	cells := regexp.MustCompile(`<tr data-concern="(\w+)">.*?<td data-f="changed_at">([^<]*)</td>`).FindAllStringSubmatch(body, -1)
	if len(cells) != 4 {
		t.Fatalf("%d concern rows with a change time:\n%s", len(cells), body)
	}
	for _, c := range cells {
		at, err := time.Parse("2006-01-02 15:04:05Z", c[2])
		if err != nil || at.Before(before) || at.After(after) {
			t.Errorf("%s last changed %q, want a time between %v and %v (%v)", c[1], c[2], before, after, err)
		}
	}
	if strings.Contains(body, "keeps no time of change") {
		t.Error("the page says DynamoDB keeps no change times")
	}

	m := Start(t, server.Options{})
	Must(t, m.NS.Init(ctx, "mydb"))
	if _, body := m.Call(t, "GET", "/ui/record/mydb:main", ""); !strings.Contains(body, `<td data-f="changed_at">–</td>`) || !strings.Contains(body, "keeps no time of change") {
		t.Errorf("over a memory store the page shows change times:\n%s", body)
	}
}
