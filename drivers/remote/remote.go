// Package remote is the http:// and https:// driver: a thin client of the
// nameservice's own routes (/ns/v1, served by "ns serve"), so that a process
// without backend credentials reads, pushes and watches through the service.
//
//	http(s)://HOST:PORT[/BASE]?token_file=PATH&timeout=10s&ca_file=PATH
//
// The bearer token is read from token_file, else from $NAMESERVICE_TOKEN; it
// never appears in an error. ca_file adds a PEM CA bundle to trust (https).
// timeout bounds one request (default 30s; not an event stream).
//
// Every write carries an idempotency key, and one whose answer was lost is
// resent with it, marked as a resend (docs/serve.md, "Lost answers"). When
// neither the server nor its backend can tell what happened, the write
// fails with an error wrapping model.ErrOutcomeUnknown: a write that landed
// is never reported as not applied, and never sent as new again.
package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
)

// The URL schemes of this driver.
const (
	Scheme    = "http"
	SchemeTLS = "https"
)

func init() {
	drivers.Register(Scheme, drivers.Opens(ParseURL, Open))
	drivers.Register(SchemeTLS, drivers.Opens(ParseURL, Open))
}

// Defaults of Config.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxAttempts = 5
	maxResponseBytes   = 64 << 20
)

// Config configures a driver.
type Config struct {
	// BaseURL is the server's URL, e.g. http://127.0.0.1:8080.
	BaseURL string
	// Token is the bearer token; empty sends none.
	Token string
	// HTTPClient is the client to use; nil makes one (with TLSConfig).
	HTTPClient *http.Client
	// TLSConfig is used by the client made when HTTPClient is nil.
	TLSConfig *tls.Config
	// Timeout bounds one request (not an event stream).
	Timeout time.Duration
	// MaxAttempts bounds the sends of one request whose answer was lost.
	MaxAttempts int
}

// Driver is a client of one server. It is safe for concurrent use.
type Driver struct {
	base   string
	client *http.Client // without a timeout: send bounds a request, ctx an event stream
	cfg    Config
	closed driverutil.ClosedFlag
}

var (
	_ driver.Driver  = (*Driver)(nil)
	_ driver.Watcher = (*Driver)(nil)
)

// ParseURL returns the Config of an http(s):// URL: the URL without its
// query as BaseURL, the token from token_file (else $NAMESERVICE_TOKEN), a
// TLS configuration trusting ca_file's certificates, and timeout. It reads
// those files. It returns an error wrapping model.ErrInvalidArgument for an
// unknown parameter, a malformed value or a file it cannot read.
func ParseURL(u *url.URL) (Config, error) {
	q := u.Query()
	// Trimmed as token_file's contents are: a secret mounted into the
	// environment keeps its file's newline.
	cfg := Config{Token: strings.TrimSpace(os.Getenv("NAMESERVICE_TOKEN"))}
	if f := q.Get("token_file"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return Config{}, fmt.Errorf("%w: remote: token_file: %v", model.ErrInvalidArgument, err)
		}
		cfg.Token = strings.TrimSpace(string(b))
	}
	if v := q.Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%w: remote: timeout %q is not a positive duration", model.ErrInvalidArgument, v)
		}
		cfg.Timeout = d
	}
	if f := q.Get("ca_file"); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return Config{}, fmt.Errorf("%w: remote: ca_file: %v", model.ErrInvalidArgument, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return Config{}, fmt.Errorf("%w: remote: ca_file %s holds no PEM certificate", model.ErrInvalidArgument, f)
		}
		cfg.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	for k := range q {
		if k != "token_file" && k != "timeout" && k != "ca_file" {
			return Config{}, fmt.Errorf("%w: remote: unknown URL parameter %q (want token_file, timeout, ca_file)", model.ErrInvalidArgument, k)
		}
	}
	b := *u
	b.RawQuery, b.Fragment, b.User = "", "", nil
	cfg.BaseURL = b.String()
	return cfg, nil
}

// Open returns a driver for the server at cfg.BaseURL. It does not contact
// the server. It returns an error wrapping model.ErrInvalidArgument when
// BaseURL is not http(s)://HOST[:PORT][/PATH], or when the token holds a
// control character (no header can carry it).
func Open(_ context.Context, cfg Config) (*Driver, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != Scheme && u.Scheme != SchemeTLS) || u.Host == "" {
		return nil, fmt.Errorf("%w: remote: base URL must be http(s)://HOST[:PORT][/PATH]", model.ErrInvalidArgument)
	}
	if strings.ContainsFunc(cfg.Token, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
		// net/http refuses such a header on every request: say so once.
		return nil, fmt.Errorf("%w: remote: the token holds a control character, which no HTTP header can carry", model.ErrInvalidArgument)
	}
	cfg.Timeout = driverutil.Positive(cfg.Timeout, DefaultTimeout)
	cfg.MaxAttempts = driverutil.Positive(cfg.MaxAttempts, DefaultMaxAttempts)
	d := &Driver{base: strings.TrimRight(cfg.BaseURL, "/") + nswire.Prefix, client: cfg.HTTPClient, cfg: cfg}
	if d.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		if cfg.TLSConfig != nil {
			tr.TLSClientConfig = cfg.TLSConfig
		}
		d.client = &http.Client{Transport: tr}
	}
	return d, nil
}

// Close implements driver.Driver.
func (d *Driver) Close() error {
	d.closed.Close()
	d.client.CloseIdleConnections()
	return nil
}

// response is a server's answer.
type response struct {
	status int
	body   []byte
}

// serverError returns the error an answer's body names, when the body is
// the server's own error form.
func (r *response) serverError() (*nswire.Error, bool) {
	var e nswire.Error
	if json.Unmarshal(r.body, &e) != nil || e.Code == "" {
		return nil, false
	}
	return &e, true
}

// err returns the error of an answer that is not a success. A 401 wraps
// model.ErrPermissionDenied, like a 403, and says where the driver reads
// its token. The server's own message is kept as it is, without op: it
// names the operation and the ID already.
func (r *response) err(op string) error {
	e, ours := r.serverError()
	switch {
	case r.status == http.StatusUnauthorized:
		says := ""
		if ours && e.Error != "" {
			says = " (the server says: " + e.Error + ")"
		}
		return fmt.Errorf("remote: %s: %w: no valid token%s; the driver sends the token of $NAMESERVICE_TOKEN, or of the file ?token_file=PATH in the URL",
			op, model.ErrPermissionDenied, says)
	case ours:
		return fmt.Errorf("remote: %w", e.ToDriverError())
	}
	return fmt.Errorf("remote: %s: %w: HTTP %d: %s", op, model.ErrInternal, r.status, snippet(r.body))
}

func snippet(b []byte) string {
	return strings.TrimSpace(string(b[:min(len(b), 200)]))
}

// ambiguous reports whether an answer does not settle a request: a 5xx
// without the server's error body comes from a proxy in between (the
// server may have run the request), and the server's own Unavailable (it
// could not reach its backend, and changed nothing) may pass. An answer
// that the outcome is unknown settles it: resending cannot tell more.
func (r *response) ambiguous() bool {
	if r.status < 500 {
		return false
	}
	e, ours := r.serverError()
	return !ours || e.Code == model.Unavailable.String() && !e.OutcomeUnknown
}

// proxied reports whether a 5xx answer came from something between the
// client and the server, which may have passed the request on.
func (r *response) proxied() bool {
	_, ours := r.serverError()
	return r.status >= 500 && !ours
}

// do sends one request, resending it while its answer is lost. A write
// (any method but GET) carries an idempotency key, the same on every resend: the Write's ID when
// ctx carries one (driver.WithWrite), else a random one. Its attempt number
// stays 1 until an attempt may have reached the server (a broken exchange
// after connecting, a proxy's 5xx): from then on the server resolves the
// write against the backend before writing (driver.Write.Resend).
func (d *Driver) do(ctx context.Context, op, method, path string, body []byte) (*response, error) {
	write := method != http.MethodGet
	if err := d.closed.Check(ctx, "remote: "+op); err != nil {
		return nil, err
	}
	var key string
	sent := 0 // attempts that may have reached a server
	if write {
		w := driver.WriteOf(ctx)
		key = w.ID
		if w.Resend {
			sent = 1
		}
	}
	for attempt := 1; ; attempt++ {
		resp, err := d.send(ctx, method, path, body, key, sent+1)
		if err == nil && !resp.ambiguous() {
			return resp, nil
		}
		if write && (err != nil && !neverSent(err) || err == nil && resp.proxied()) {
			sent++
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("remote: %s: %w", op, ctx.Err())
		}
		if attempt >= d.cfg.MaxAttempts {
			return nil, lost(op, sent > 0, attempt, resp, err)
		}
		if err := driverutil.Sleep(ctx, driverutil.Jitter(20*time.Millisecond, time.Second, attempt)); err != nil {
			return nil, fmt.Errorf("remote: %s: %w", op, err)
		}
	}
}

// neverSent reports whether a failed exchange ended before the request
// could reach a server: the connection was never made.
func neverSent(err error) bool {
	e, ok := errors.AsType[*exchangeError](err)
	return ok && e.dial
}

// lost returns the error of a request whose last attempt got no answer
// (err, wrapping ErrUnavailable) or an ambiguous one (resp). maybeLanded
// says a write's attempt may have reached a server: its outcome is then
// unknown. It names op, but for the server's own error: its message names
// the operation and the ID already.
func lost(op string, maybeLanded bool, attempts int, resp *response, err error) error {
	what := fmt.Sprintf("gave up after %d attempts", attempts)
	switch {
	case maybeLanded && err != nil:
		return fmt.Errorf("remote: %s: %w", op, driver.OutcomeUnknown("%d attempts, the last: %v", attempts, err))
	case maybeLanded:
		last := fmt.Sprintf("HTTP %d: %s", resp.status, snippet(resp.body))
		return fmt.Errorf("remote: %s: %w", op, driver.OutcomeUnknown("%d attempts, the last: %v", attempts, last))
	case err != nil:
		return fmt.Errorf("remote: %s: %s: %w", op, what, err)
	}
	if e, ok := resp.serverError(); ok {
		return fmt.Errorf("remote: %w (%s)", e.ToDriverError(), what)
	}
	return fmt.Errorf("remote: %s: %w: %s: HTTP %d: %s", op, model.ErrUnavailable, what, resp.status, snippet(resp.body))
}

func (d *Driver) send(ctx context.Context, method, path string, body []byte, key string, attempt int) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	if key != "" && body == nil {
		body = []byte("{}") // see newRequest: a write always has a body
	}
	req, err := d.newRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set(nswire.HeaderIdempotencyKey, key)
		req.Header.Set(nswire.HeaderAttempt, strconv.Itoa(attempt))
		// Without GetBody, net/http never sends the request again by
		// itself (it would for one with an Idempotency-Key whose
		// connection broke): every resend is this driver's, numbered.
		req.GetBody = nil
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, transportError(err)
	}
	return &response{status: resp.StatusCode, body: b}, nil
}

// newRequest builds a request of the protocol: the token, the trace of the
// call (for the server's spans; nothing without one), and a JSON body when
// body is not nil.
func (d *Driver) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", model.ErrInvalidArgument, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if d.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+d.cfg.Token)
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req, nil
}

// transportError describes a failed exchange without the request's URL
// details beyond host and path (url.Error would repeat the whole URL).
func transportError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	op, ok := errors.AsType[*net.OpError](err)
	return &exchangeError{msg: model.ErrUnavailable.Error() + ": " + err.Error(), dial: ok && op.Op == "dial"}
}

// exchangeError is a failed exchange with the server. dial says it failed
// before a connection was made: the request never left.
type exchangeError struct {
	msg  string
	dial bool
}

func (e *exchangeError) Error() string { return e.msg }
func (e *exchangeError) Unwrap() error { return model.ErrUnavailable }

func recordPath(id model.ID) string { return "/records/" + nswire.PathID(id) }

// call is do whose answer must have status want: any other is its error.
func (d *Driver) call(ctx context.Context, op, method, path string, body []byte, want int) (*response, error) {
	resp, err := d.do(ctx, op, method, path, body)
	if err != nil {
		return nil, err
	}
	if resp.status != want {
		return nil, resp.err(op)
	}
	return resp, nil
}

// record is call for an answer 200 that holds a record.
func (d *Driver) record(ctx context.Context, op, method, path string, body []byte) (*model.Record, error) {
	resp, err := d.call(ctx, op, method, path, body, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var rec model.Record
	if err := rec.UnmarshalJSON(resp.body); err != nil {
		return nil, fmt.Errorf("remote: %s: %w: the server's record does not decode: %v", op, model.ErrInternal, err)
	}
	return &rec, nil
}

// Get implements driver.Driver.
func (d *Driver) Get(ctx context.Context, id model.ID) (*model.Record, error) {
	return d.record(ctx, "get "+id.String(), http.MethodGet, recordPath(id), nil)
}

var _ driver.HeadsReader = (*Driver)(nil)

// Heads implements driver.HeadsReader with one GET /ns/v1/heads/{id}. A
// server without that route answers a plain 404, which is returned as an
// error wrapping model.ErrUnsupported (the caller then uses Get).
func (d *Driver) Heads(ctx context.Context, id model.ID) (model.Heads, error) {
	op := "heads " + id.String()
	resp, err := d.do(ctx, op, http.MethodGet, "/heads/"+nswire.PathID(id), nil)
	if err != nil {
		return model.Heads{}, err
	}
	if _, ours := resp.serverError(); resp.status == http.StatusNotFound && !ours {
		return model.Heads{}, fmt.Errorf("remote: %s: %w: the server has no heads route", op, model.ErrUnsupported)
	}
	if resp.status != http.StatusOK {
		return model.Heads{}, resp.err(op)
	}
	var hr nswire.HeadsResponse
	if err := json.Unmarshal(resp.body, &hr); err != nil {
		return model.Heads{}, fmt.Errorf("remote: %s: %w: malformed answer: %v", op, model.ErrInternal, err)
	}
	return model.Heads{Head: hr.Head, Index: hr.Index}, nil
}

// Create implements driver.Driver.
func (d *Driver) Create(ctx context.Context, rec *model.Record) error {
	body, err := rec.MarshalJSON()
	if err != nil {
		return fmt.Errorf("remote: create %s: %w: %v", rec.ID, model.ErrInvalidArgument, err)
	}
	_, err = d.call(ctx, "create "+rec.ID.String(), http.MethodPut, recordPath(rec.ID), body,
		http.StatusCreated)
	return err
}

// Update implements driver.Driver.
func (d *Driver) Update(ctx context.Context, id model.ID, c model.Concern, cond driver.Condition, next model.Value) (driver.Outcome, error) {
	body, err := json.Marshal(nswire.NewPushRequest(cond, next))
	if err != nil {
		return driver.Outcome{}, fmt.Errorf("remote: push %s: %w: %v", id, model.ErrInvalidArgument, err)
	}
	op := "push " + c.String() + " " + id.String()
	resp, err := d.do(ctx, op, http.MethodPost, "/push/"+c.String()+"/"+nswire.PathID(id), body)
	if err != nil {
		return driver.Outcome{}, err
	}
	// One decoding tells an outcome from the server's error form (a 409
	// may be an error too: WrongKind).
	var out struct {
		nswire.PushResponse
		Code string `json:"code"`
	}
	err = json.Unmarshal(resp.body, &out)
	switch {
	case resp.status != http.StatusOK && resp.status != http.StatusConflict, err == nil && out.Code != "":
		return driver.Outcome{}, resp.err(op)
	case err != nil || out.Applied != (resp.status == http.StatusOK):
		return driver.Outcome{}, fmt.Errorf("remote: %s: %w: malformed answer: %s", op, model.ErrInternal, snippet(resp.body))
	}
	return driver.Outcome{Applied: out.Applied, Current: out.Current}, nil
}

// Retract implements driver.Driver.
func (d *Driver) Retract(ctx context.Context, id model.ID, at time.Time) error {
	body, _ := json.Marshal(nswire.RetractRequest{At: at.Unix()})
	op := "retract " + id.String()
	_, err := d.call(ctx, op, http.MethodPost, "/retract/"+nswire.PathID(id), body, http.StatusNoContent)
	return err
}

// Delete implements driver.Driver.
func (d *Driver) Delete(ctx context.Context, id model.ID) error {
	_, err := d.call(ctx, "purge "+id.String(), http.MethodDelete, recordPath(id), nil, http.StatusNoContent)
	return err
}

// List implements driver.Driver.
func (d *Driver) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	q := nswire.Query(map[string]string{
		"kind": string(opts.Kind), "prefix": opts.Prefix, "page_token": opts.PageToken,
		"state": opts.State, "source_type": opts.SourceType,
	})
	if opts.IncludeRetracted {
		q.Set("include_retracted", "true")
	}
	if opts.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(opts.PageSize))
	}
	path := "/records"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	resp, err := d.call(ctx, "list", http.MethodGet, path, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var lr nswire.ListResponse
	if err := json.Unmarshal(resp.body, &lr); err != nil {
		return nil, fmt.Errorf("remote: list: %w: malformed answer: %v", model.ErrInternal, err)
	}
	page := &driver.Page{NextPageToken: lr.NextPageToken}
	for _, r := range lr.Records {
		if r == nil { // a JSON null, which no record decoder sees
			return nil, fmt.Errorf("remote: list: %w: malformed answer: a null record", model.ErrInternal)
		}
		// A server older than the state and source type filters ignores
		// them: what it sends is filtered here again.
		if opts.Matches(r) {
			page.Records = append(page.Records, r)
		}
	}
	for _, f := range lr.Failed {
		id, _ := model.ParseID(f.ID) // zero for none, or one that does not parse
		page.Failed = append(page.Failed, &model.RecordError{ID: id, Object: f.Object,
			Err: (&nswire.Error{Error: f.Error, Code: f.Code}).ToDriverError()})
	}
	return page, nil
}
