package telemetry

import "testing"

// TestFromURL: the backend is the scheme and the namespace the table,
// bucket or directory, never credentials or parameters.
func TestFromURL(t *testing.T) {
	for _, c := range []struct{ url, backend, namespace string }{
		{"dynamodb://fluree-ns?region=eu-west-1&endpoint=http://x", "dynamodb", "fluree-ns"},
		{"s3://bucket/prefix?access_key_id=AKIA&secret_access_key=s3cret", "s3", "bucket/prefix"},
		{"https://user:pa55@ns.internal:8443?token_file=/run/t", "https", "ns.internal:8443"},
		{"file:///var/lib/ns", "file", "var/lib/ns"},
		{"file://./rel", "file", "./rel"},
		{"FILE:rel", "file", "rel"},
		{"%%", "", ""},
	} {
		b, ns := FromURL(c.url)
		if b != c.backend || ns != c.namespace {
			t.Errorf("FromURL(%q) = %q, %q; want %q, %q", c.url, b, ns, c.backend, c.namespace)
		}
	}
}
