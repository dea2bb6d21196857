package jsonld

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"nameservice.dev/nameservice/model"
)

// connectionSeeds are connection configs in the forms of the DynamoDB
// guide and of Fluree's own configs.
var connectionSeeds = []string{
	`{"@context": {"@base": "https://ns.flur.ee/config/connection/", "@vocab": "https://ns.flur.ee/system#"}, "@graph": [
		{"@id": "s3Storage", "@type": "Storage", "s3Bucket": "fluree-production-data", "s3Endpoint": "https://s3.us-east-1.amazonaws.com", "s3Prefix": "ledgers"},
		{"@id": "dynamodbNs", "@type": "Publisher", "dynamodbTable": "fluree-nameservice", "dynamodbRegion": "us-east-1", "dynamodbTimeoutMs": 5000},
		{"@id": "connection", "@type": "Connection", "commitStorage": {"@id": "s3Storage"}, "indexStorage": {"@id": "s3Storage"}, "primaryPublisher": {"@id": "dynamodbNs"}}]}`,
	`{"@context": {"@vocab": "https://ns.flur.ee/system#"}, "@graph": [{"@type": "Publisher", "dynamodbTable": {"envVar": "NS_FUZZ_UNSET", "defaultVal": "t"}}]}`,
	`{"@context": {"@vocab": "https://ns.flur.ee/system#"}, "@graph": [{"@id": "s", "@type": "Storage", "filePath": "./data"},
		{"@id": "c", "@type": "Connection", "indexStorage": {"@id": "s"}}]}`,
	`{"@context": {"sys": "https://ns.flur.ee/system#"}, "@graph": [{"@type": "sys:Publisher", "sys:storage": {"@id": "x"}}, {"@id": "x", "@type": "sys:Storage", "sys:filePath": "/var/lib/fluree"}]}`,
	`{"@type": "Publisher", "dynamodbTable": "solo"}`,
	`{"@context": {"@vocab": "https://ns.flur.ee/system#"}, "@graph": [{"@id": "mem", "@type": "Storage"}]}`,
	`{"@context": {"@vocab": "https://ns.flur.ee/system#"}, "@graph": [{"@id": "i", "@type": "Storage", "ipfsEndpoint": "http://x"}]}`,
}

// FuzzConnectionURL feeds arbitrary bytes to ConnectionURL: it must never
// panic, must fail only with ErrInvalidArgument, and every URL it returns
// must parse with one of the nameservice schemes.
//
//	go test -fuzz FuzzConnectionURL ./jsonld/
func FuzzConnectionURL(f *testing.F) {
	for _, s := range connectionSeeds {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join(fixtureRoot, "*", "ns@v2", "*", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := ConnectionURL(data)
		if err != nil {
			if !errors.Is(err, model.ErrInvalidArgument) {
				t.Fatalf("error does not wrap ErrInvalidArgument: %v", err)
			}
			return
		}
		p, err := url.Parse(u)
		if err != nil {
			t.Fatalf("ConnectionURL returned %q, which does not parse: %v", u, err)
		}
		switch p.Scheme {
		case "dynamodb", "file", "s3", "mem":
		default:
			t.Fatalf("ConnectionURL returned %q, with an unknown scheme", u)
		}
	})
}
