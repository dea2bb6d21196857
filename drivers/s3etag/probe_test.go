package s3etag_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/layout"
)

// ignoringProxy is an S3 endpoint that ignores preconditions: it forwards
// every request to the real server without If-Match and If-None-Match.
// Those headers are covered by the client's SigV4 signature, so the proxy
// re-signs each request (same credentials and region, the client's payload
// hash) after dropping them.
func ignoringProxy(t *testing.T, target string) string {
	t.Helper()
	up, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }) // as S3 signs
	creds, _ := testCreds.Retrieve(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, up.Scheme+"://"+up.Host+r.URL.RequestURI(), bytes.NewReader(body))
		for k, v := range r.Header {
			switch http.CanonicalHeaderKey(k) {
			case "If-Match", "If-None-Match", "Authorization":
			default:
				out.Header[k] = v
			}
		}
		out.ContentLength = int64(len(body))
		hash := r.Header.Get("X-Amz-Content-Sha256")
		if err := signer.SignHTTP(r.Context(), creds, out, hash, "s3", "us-east-1", time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestProbeRefusesStoreIgnoringConditions: through the proxy, Open fails
// with ErrUnsupported saying what is ignored; unsafe=true and the lock
// protocol open it anyway.
func TestProbeRefusesStoreIgnoringConditions(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	cfg := baseConfig(ignoringProxy(t, endpoint), bucket, layout.B)
	_, err := s3etag.Open(ctx, cfg)
	if !errors.Is(err, driver.ErrUnsupported) || !strings.Contains(err.Error(), "If-None-Match") {
		t.Fatalf("open through a proxy that drops preconditions: %v, want ErrUnsupported naming If-None-Match", err)
	}
	t.Log(err)
	cfg.Unsafe = true
	d, err := s3etag.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("unsafe open: %v", err)
	}
	if p := d.Probed(); p.CreateEnforced || p.UpdateEnforced || p.DeleteEnforced {
		t.Errorf("probe through the proxy = %+v, want nothing enforced", p)
	}
	cfg.Unsafe = false
	cfg.Lock = newLockTable(t, time.Second)
	if _, err := s3etag.Open(ctx, cfg); err != nil {
		t.Fatalf("open in lock mode: %v", err)
	}
	direct, err := s3etag.Open(ctx, baseConfig(endpoint, bucket, layout.B))
	if err != nil {
		t.Fatal(err)
	}
	if p := direct.Probed(); !p.CreateEnforced || !p.UpdateEnforced || !p.DeleteEnforced {
		t.Errorf("probe of versitygw = %+v, want everything enforced", p)
	}
}

// TestOpenURL opens through the registry, and bad URLs fail without
// echoing secrets.
func TestOpenURL(t *testing.T) {
	endpoint, bucket := newBucket(t)
	ctx := context.Background()
	d, err := drivers.Open(ctx, "s3://"+bucket+"/some/prefix?layout=c&region=us-east-1&endpoint="+url.QueryEscape(endpoint))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	id := driver.ID{Name: "x", Branch: "main"}
	if err := d.Create(ctx, driver.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"s3://" + bucket + "?layout=d",
		"s3://" + bucket + "?nope=1",
		"s3://user:secretpw@" + bucket,
		"s3://" + bucket + "?lock=" + url.QueryEscape("dynamodb://t?session_token=secretpw&nope=1"),
	} {
		_, err := drivers.Open(ctx, bad)
		if !errors.Is(err, driver.ErrInvalidArgument) || strings.Contains(err.Error(), "secretpw") {
			t.Errorf("open %q: %v, want ErrInvalidArgument without the secret", bad, err)
		}
	}
}
