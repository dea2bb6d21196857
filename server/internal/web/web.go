// Package web is what the server's route families (package server's
// /ns/v1 routes, server/fluree, server/console) share to serve a request:
// the JSON of an answer, the reading of a request's body within the
// server's limits, a backend's error as a client may be told it, and what
// a family is lent of the server (Env). It knows no route.
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
)

// Marshal encodes v as compact JSON without HTML escaping, as serde_json
// does, and without a trailing newline.
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{"error":"cannot encode the answer","code":"Internal"}`)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// WriteJSON answers status with v as JSON (see Marshal).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	WriteRaw(w, status, Marshal(v))
}

// WriteRaw answers status with body, a JSON document (nil: no body).
func WriteRaw(w http.ResponseWriter, status int, body []byte) {
	if body != nil {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// OpContext returns the context of a backend operation of r: not canceled
// when the client goes away, so that a write it started lands or fails on
// its own and its outcome can be given to a resend, but bounded by
// timeout.
func OpContext(r *http.Request, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
}

// Env is what package server lends every route family it mounts
// (server/fluree, server/console): each reaches the backend, the listing,
// the event hub and the log only through it.
type Env struct {
	NS     *nameservice.NameService
	Public *Public // tells clients of backend errors
	Lister Lister  // the records a caller may read
	// Subscribe takes a stream slot for r and subscribes it to the changes
	// of record id ("" for every record) on the server's event hub,
	// answering the request itself (and returning nil) when either is
	// refused. Every change after the return is sent, so a stream reads
	// its records after subscribing. Close the stream when done.
	Subscribe func(w http.ResponseWriter, r *http.Request, id string) *Stream
	// Auth wraps a handler with authentication: 401 without a valid
	// token, in the answer format of the request's route family; else
	// the handler runs with the principal in its request's context
	// (auth.FromContext).
	Auth func(http.HandlerFunc) http.HandlerFunc
	Log  *slog.Logger
}

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
