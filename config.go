package nameservice

import (
	"context"
	"fmt"
	"os"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/jsonld"
)

// OpenConfig opens the nameservice named by a Fluree JSON-LD connection
// config file (its primary Publisher: a DynamoDB table, or file or S3
// storage; see jsonld.ConnectionURL). It returns an error wrapping
// ErrInvalidArgument, naming the file, when the config names no nameservice.
func OpenConfig(ctx context.Context, path string, opts ...Option) (*NameService, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("connection config: %w", err)
	}
	u, err := jsonld.ConnectionURL(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return Open(ctx, u, opts...)
}

// ParseObject decodes a JSON object for use as a payload; "null" yields
// nil. It returns an error wrapping ErrInvalidArgument for anything else.
func ParseObject(raw []byte) (Object, error) { return driver.ParseObject(raw) }
