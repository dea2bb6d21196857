package fluree

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"nameservice.dev/nameservice/server/internal/web"
)

// Fluree's error types (fluree-vocab errors.rs).
const (
	errTypeBadRequest   = "err:api/BadRequest"
	errTypeNotFound     = "err:api/NotFound"
	errTypeJSONParse    = "err:parse/JsonParse"
	errTypeUnauthorized = "err:policy/Unauthorized"
	errTypeInternal     = "err:system/InternalError"
)

// flureeError is Fluree's error body.
type flureeError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
	Type   string `json:"@type"`
}

// WriteError answers status with Fluree's error body, its type the
// status's.
func WriteError(w http.ResponseWriter, status int, msg string) {
	t := errTypeInternal
	switch status {
	case http.StatusBadRequest:
		t, msg = errTypeBadRequest, "Bad request: "+msg
	case http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType:
		t = errTypeJSONParse
	case http.StatusUnauthorized:
		t = errTypeUnauthorized
	case http.StatusNotFound:
		t = errTypeNotFound
	}
	writeTyped(w, status, t, msg)
}

func writeTyped(w http.ResponseWriter, status int, typ, msg string) {
	web.WriteJSON(w, status, flureeError{Error: msg, Status: status, Type: typ})
}

// ledgerNotFound is the one answer for an unknown alias and one outside
// the caller's scope.
func ledgerNotFound(w http.ResponseWriter) {
	WriteError(w, http.StatusNotFound, "Ledger not found")
}

// decodeFluree decodes a JSON body as axum's Json extractor would: 415
// without a JSON content type, 400 for a syntax error, 422 for a body of the
// wrong shape. Unknown fields are ignored, as serde does by default.
func decodeFluree(w http.ResponseWriter, r *http.Request, v any) bool {
	ct := r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); strings.TrimSpace(mt) != "application/json" && !strings.HasSuffix(strings.TrimSpace(mt), "+json") {
		WriteError(w, http.StatusUnsupportedMediaType, "Expected request with `Content-Type: application/json`")
		return false
	}
	body, err := web.ReadBody(r)
	if _, ok := errors.AsType[*web.TooLargeError](err); ok {
		WriteError(w, http.StatusRequestEntityTooLarge, err.Error())
		return false
	} else if err != nil {
		WriteError(w, http.StatusBadRequest, err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		if _, syntax := errors.AsType[*json.SyntaxError](err); syntax || errors.Is(err, io.ErrUnexpectedEOF) || !json.Valid(body) {
			WriteError(w, http.StatusBadRequest, "Failed to parse the request body as JSON: "+err.Error())
			return false
		}
		WriteError(w, http.StatusUnprocessableEntity, "Failed to deserialize the JSON body into the target type: "+err.Error())
		return false
	}
	return true
}
