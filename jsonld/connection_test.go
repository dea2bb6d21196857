package jsonld

import (
	"errors"
	"net/url"
	"testing"

	"nameservice.dev/nameservice/model"
)

func TestConnectionURL(t *testing.T) {
	t.Setenv("NS_TEST_TABLE", "from-env")
	const ctx = `"@context": {"@base": "https://ns.flur.ee/config/connection/", "@vocab": "https://ns.flur.ee/system#"}`
	cases := map[string]struct{ config, want string }{
		"guide example": {`{` + ctx + `, "@graph": [
			{"@id": "s3Storage", "@type": "Storage", "s3Bucket": "fluree-production-data", "s3Endpoint": "https://s3.us-east-1.amazonaws.com", "s3Prefix": "ledgers"},
			{"@id": "dynamodbNs", "@type": "Publisher", "dynamodbTable": "fluree-nameservice", "dynamodbRegion": "us-east-1"},
			{"@id": "connection", "@type": "Connection", "commitStorage": {"@id": "s3Storage"}, "indexStorage": {"@id": "s3Storage"}, "primaryPublisher": {"@id": "dynamodbNs"}}]}`,
			"dynamodb://fluree-nameservice?region=us-east-1"},
		"all dynamodb options": {`{` + ctx + `, "@graph": [{"@id": "p", "@type": "Publisher", "dynamodbTable": "tbl",
			"dynamodbRegion": "eu-west-1", "dynamodbEndpoint": "http://localhost:4566", "dynamodbTimeoutMs": 5000}]}`,
			"dynamodb://tbl?region=eu-west-1&endpoint=http%3A%2F%2Flocalhost%3A4566&timeout=5000ms"},
		"single publisher node": {`{"@type": "Publisher", "dynamodbTable": "solo"}`, "dynamodb://solo"},
		"env var": {`{` + ctx + `, "@graph": [{"@type": "Publisher", "dynamodbTable": {"envVar": "NS_TEST_TABLE", "defaultVal": "x"}}]}`,
			"dynamodb://from-env"},
		"env default": {`{` + ctx + `, "@graph": [{"@type": "Publisher", "dynamodbTable": {"envVar": "NS_TEST_UNSET_VAR", "defaultVal": "dflt"}}]}`,
			"dynamodb://dflt"},
		"file storage": {`{` + ctx + `, "@graph": [{"@id": "storage1", "@type": "Storage", "filePath": "/var/lib/fluree"},
			{"@id": "connection", "@type": "Connection", "indexStorage": {"@id": "storage1"}}]}`, "file:///var/lib/fluree"},
		"relative file": {`{` + ctx + `, "@graph": [{"@id": "s", "@type": "Storage", "filePath": "./data"}]}`, "file://./data"},
		"storage publisher": {`{` + ctx + `, "@graph": [
			{"@id": "s3", "@type": "Storage", "s3Bucket": "b", "s3Prefix": "fluree/", "s3Endpoint": "http://127.0.0.1:7070"},
			{"@id": "publisher", "@type": "Publisher", "storage": {"@id": "s3"}},
			{"@id": "connection", "@type": "Connection", "indexStorage": {"@id": "s3"}}]}`,
			"s3://b/fluree?endpoint=http%3A%2F%2F127.0.0.1%3A7070"},
		"commit storage wins": {`{` + ctx + `, "@graph": [
			{"@id": "c", "@type": "Storage", "filePath": "/c"}, {"@id": "i", "@type": "Storage", "filePath": "/i"},
			{"@id": "connection", "@type": "Connection", "indexStorage": {"@id": "i"}, "commitStorage": {"@id": "c"}}]}`, "file:///c"},
		"prefixed keys": {`{"@context": {"sys": "https://ns.flur.ee/system#"}, "@graph": [{"@type": "sys:Publisher", "sys:dynamodbTable": "pub"}]}`,
			"dynamodb://pub"},
		"memory": {`{` + ctx + `, "@graph": [{"@id": "mem", "@type": "Storage"}]}`, "mem://"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ConnectionURL([]byte(c.config))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
			if _, err := url.Parse(got); err != nil {
				t.Errorf("%s does not parse: %v", got, err)
			}
		})
	}
}

func TestConnectionURLErrors(t *testing.T) {
	bad := map[string]string{
		"not JSON":           `{`,
		"no publisher":       `{"@graph": [{"@type": "Connection"}]}`,
		"two publishers":     `{"@graph": [{"@type": "Publisher", "dynamodbTable": "a"}, {"@type": "Publisher", "dynamodbTable": "b"}]}`,
		"dangling reference": `{"@graph": [{"@type": "Connection", "primaryPublisher": {"@id": "nope"}}]}`,
		"empty table":        `{"@graph": [{"@type": "Publisher", "dynamodbTable": ""}]}`,
		"unset env":          `{"@graph": [{"@type": "Publisher", "dynamodbTable": {"envVar": "NS_TEST_UNSET_VAR"}}]}`,
		"publisher nothing":  `{"@graph": [{"@type": "Publisher"}]}`,
		"ipfs":               `{"@graph": [{"@type": "Storage", "ipfsApiUrl": "http://x"}]}`,
	}
	for name, s := range bad {
		if _, err := ConnectionURL([]byte(s)); !errors.Is(err, model.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
}

func TestConnectionURLRejectsNamesThatAreNotHosts(t *testing.T) {
	for _, cfg := range []string{
		`{"@type": "Publisher", "dynamodbTable": " 00"}`,
		`{"@type": "Publisher", "dynamodbTable": "ab"}`,
		`{"@type": "Publisher", "dynamodbTable": "a/b/c"}`,
		`{"@type": "Storage", "s3Bucket": "my bucket"}`,
	} {
		if u, err := ConnectionURL([]byte(cfg)); !errors.Is(err, model.ErrInvalidArgument) {
			t.Errorf("ConnectionURL(%s) = %q, %v; want ErrInvalidArgument", cfg, u, err)
		}
	}
}
