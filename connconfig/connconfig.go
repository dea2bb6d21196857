// Package connconfig opens the nameservice named by a Fluree JSON-LD
// connection config file. It is apart from package nameservice so that the
// portable API does not depend on the JSON-LD codec.
package connconfig

import (
	"context"
	"fmt"
	"os"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/jsonld"
)

// Open opens the nameservice named by the Fluree JSON-LD connection config
// file at path (its primary Publisher: a DynamoDB table, or file or S3
// storage; see jsonld.ConnectionURL). It returns an error wrapping
// nameservice.ErrInvalidArgument, naming the file, when the config names no
// nameservice.
func Open(ctx context.Context, path string, opts ...nameservice.Option) (*nameservice.NameService, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("connection config: %w", err)
	}
	u, err := jsonld.ConnectionURL(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nameservice.Open(ctx, u, opts...)
}
