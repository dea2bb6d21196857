// Package web is what the server's route families (/ns/v1, server/fluree,
// server/console) share to serve a request: answers, bodies, errors as a
// client may be told them, and what the server lends them (Env).
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

// OpContext returns the context of a backend operation of r, bounded by
// timeout but not canceled when the client goes away, so that a write
// lands or fails on its own and its outcome can be given to a resend.
func OpContext(r *http.Request, timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
}

// Env is what package server lends every route family it mounts.
type Env struct {
	NS     *nameservice.NameService
	Public *Public // tells clients of backend errors
	Lister Lister  // the records a caller may read
	// Subscribe takes a stream slot for r and subscribes it to the changes
	// of record id ("" for all), answering the request itself (and
	// returning nil) when either is refused. Every change after the return
	// is sent. Close the stream when done.
	Subscribe func(w http.ResponseWriter, r *http.Request, id string) *Stream
	// Auth wraps a handler with authentication: 401 without a valid token,
	// in the format of the route family; else the handler runs with the
	// principal in its context (auth.FromContext).
	Auth func(http.HandlerFunc) http.HandlerFunc
	Log  *slog.Logger
}

// ReadBody reads the body of r, which the server has bounded. A body over
// the limit is a *TooLargeError (a 413); one that cannot be read wraps
// model.ErrInvalidArgument.
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
