package testenv

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"nameservice.dev/nameservice/internal/testing/faultproxy"
)

// LossyProxy starts a fault proxy to target that loses the answer of a
// write when lose returns true (faultproxy.Config.Lose), for
// conformance.RunLostAnswers, and returns its URL.
func LossyProxy(t testing.TB, target string, lose func() bool) (string, error) {
	p, err := faultproxy.Start(faultproxy.Config{Target: target, Lose: func(*http.Request) bool { return lose() }})
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = p.Close() })
	return p.URL(), nil
}

// S3IgnoringPreconditions starts an S3 endpoint that forwards every request
// to the server at target without If-Match and If-None-Match, as a store
// without conditional writes would, and returns its URL.
func S3IgnoringPreconditions(t testing.TB, target string, creds aws.CredentialsProvider) string {
	t.Helper()
	return s3Dropping(t, target, creds, func(*http.Request) bool { return true })
}

// S3IgnoringDeletePreconditions starts an S3 endpoint that ignores If-Match
// on DeleteObject only, as MinIO and other self-hosted servers do, and
// returns its URL.
func S3IgnoringDeletePreconditions(t testing.TB, target string, creds aws.CredentialsProvider) string {
	t.Helper()
	return s3Dropping(t, target, creds, func(r *http.Request) bool { return r.Method == http.MethodDelete })
}

// s3Dropping starts a proxy to target that forwards the requests for which
// drop holds without If-Match and If-None-Match. The client's SigV4
// signature covers those headers, so the proxy re-signs each request (one
// it cannot sign goes unsigned, and the server refuses it).
func s3Dropping(t testing.TB, target string, creds aws.CredentialsProvider, drop func(*http.Request) bool) string {
	t.Helper()
	up, err := url.Parse(target)
	Must(t, err)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }) // as S3 signs
	c, err := creds.Retrieve(context.Background())
	Must(t, err)
	srv := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(up)
		r.Out.Header.Del("Authorization")
		if drop(r.In) {
			r.Out.Header.Del("If-Match")
			r.Out.Header.Del("If-None-Match")
		}
		hash := r.In.Header.Get("X-Amz-Content-Sha256")
		_ = signer.SignHTTP(r.In.Context(), c, r.Out, hash, "s3", "us-east-1", time.Now())
	}})
	t.Cleanup(srv.Close)
	return srv.URL
}
