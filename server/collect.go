package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
	"nameservice.dev/nameservice/server/internal/web"
)

// collect serves POST /ns/v1/collect: the collector over the prefix of
// the request, for a caller that may write every ID under it. The answer
// streams one JSON line per object (by record ID and reason, never the
// backend's object names), then the totals. Collection is safe to repeat,
// so it needs no idempotency key; it runs until done or the client leaves.
func (s *Server) collect(w http.ResponseWriter, r *http.Request) {
	var req nswire.CollectRequest
	if _, _, ok := s.read(w, r, in{body: &req}); !ok {
		return
	}
	if !auth.FromContext(r.Context()).CanWriteUnder(req.Prefix) {
		web.WriteJSON(w, http.StatusForbidden, nswire.Error{Error: fmt.Sprintf("collect: no write access to every ID under %q", req.Prefix),
			Code: model.PermissionDenied.String()})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	flush := http.NewResponseController(w)
	st, err := s.ns.Collect(r.Context(), nameservice.CollectOptions{
		Prefix: req.Prefix, OlderThan: time.Duration(req.OlderThanMS) * time.Millisecond, DryRun: req.DryRun,
		Report: func(o driver.Collected) {
			_ = enc.Encode(nswire.CollectLine{ID: o.ID, Removed: o.Removed, Reason: o.Reason})
			_ = flush.Flush()
		},
	})
	if err != nil {
		_, b := errorBody(s.public.Error(r.Context(), "collect", err))
		var e nswire.Error
		_ = json.Unmarshal(b, &e)
		_ = enc.Encode(nswire.CollectLine{Error: &e})
		return
	}
	_ = enc.Encode(nswire.CollectLine{Stats: &st})
}
