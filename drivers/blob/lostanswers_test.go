package blob_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/blob"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
)

// TestLostAnswers loses the answer of each write at a proxy in front of
// fake-gcs-server and Azurite while another client purges (and creates
// again) the record, in both layouts.
func TestLostAnswers(t *testing.T) {
	for _, s := range []*server{gcsServer(t), azureServer(t)} {
		for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
			t.Run(s.name+"/Layout"+strings.ToUpper(l.String()), func(t *testing.T) {
				conformance.RunLostAnswers(t, lossyHarness(t, s, l))
			})
		}
	}
}

// lossyHarness opens plain clients on a bucket of s and lossy ones
// through a proxy of their own; the proxy is armed once the client is
// open, so that the probe's writes are not the write under test.
func lossyHarness(t *testing.T, s *server, l jsonld.Layout) conformance.AnswerLoser {
	bucket := s.newBucket(t)
	opts := blob.Config{Prefix: "lost", Layout: l}
	return conformance.LossyHarnessFunc(func(context.Context, *testing.T) (conformance.Opener, conformance.LossyOpener, error) {
		open := func(ctx context.Context) (driver.Driver, error) {
			b, err := s.open(ctx, bucket, nil)
			if err != nil {
				return nil, err
			}
			return blob.OpenBucket(ctx, b, opts)
		}
		lossy := func(ctx context.Context, lose func() bool) (driver.Driver, error) {
			var armed atomic.Bool
			proxy, err := testenv.LossyProxy(t, s.endpoint, func() bool { return armed.Load() && lose() })
			if err != nil {
				return nil, err
			}
			b, err := s.open(ctx, bucket, dialing(proxy))
			if err != nil {
				return nil, err
			}
			d, err := blob.OpenBucket(ctx, b, opts)
			armed.Store(err == nil)
			return d, err
		}
		return open, lossy, nil
	})
}

// dialing returns an HTTP client that connects to proxy (a URL) whatever
// host a request names, so that requests keep the server's Host header:
// fake-gcs-server serves object reads only for its public host.
func dialing(proxy string) *http.Client {
	u, _ := url.Parse(proxy)
	var d net.Dialer
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, u.Host)
	}
	return &http.Client{Transport: tr}
}
