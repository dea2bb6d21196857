package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"nameservice.dev/nameservice/model"
)

// ReadBody reads the whole body of r, which the server has bounded to its
// MaxBodyBytes and BodyTimeout before any handler runs: the one read of a
// request body on every route. A body over the limit is a *TooLargeError
// (a 413); one that cannot be read wraps model.ErrInvalidArgument.
func ReadBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, &TooLargeError{Limit: mbe.Limit}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading the body: %v", model.ErrInvalidArgument, err)
	}
	return b, nil
}

// TooLargeError is a request body over the server's MaxBodyBytes.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("request body larger than %d bytes", e.Limit)
}

// DecodeStrict decodes a request body into v, refusing unknown fields and
// trailing data; its errors wrap model.ErrInvalidArgument.
func DecodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: request body: %v", model.ErrInvalidArgument, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: request body: data after the JSON value", model.ErrInvalidArgument)
	}
	return nil
}
