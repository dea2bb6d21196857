package testenv

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

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
// signature covers those headers, so the proxy re-signs each request.
func s3Dropping(t testing.TB, target string, creds aws.CredentialsProvider, drop func(*http.Request) bool) string {
	t.Helper()
	up, err := url.Parse(target)
	Must(t, err)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }) // as S3 signs
	c, err := creds.Retrieve(context.Background())
	Must(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, up.Scheme+"://"+up.Host+r.URL.RequestURI(), bytes.NewReader(body))
		for k, v := range r.Header {
			switch http.CanonicalHeaderKey(k) {
			case "Authorization":
			case "If-Match", "If-None-Match":
				if !drop(r) {
					out.Header[k] = v
				}
			default:
				out.Header[k] = v
			}
		}
		out.ContentLength = int64(len(body))
		hash := r.Header.Get("X-Amz-Content-Sha256")
		if err := signer.SignHTTP(r.Context(), c, out, hash, "s3", "us-east-1", time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
