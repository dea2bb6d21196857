package fluree

import (
	"strings"

	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/model"
)

// nsRecord is Fluree's NsRecord, field for field and in its order.
type nsRecord struct {
	LedgerID string `json:"ledger_id"`
	Name     string `json:"name"`
	Branch   string `json:"branch"`
	heads
	DefaultContext *string `json:"default_context"`
	Retracted      bool    `json:"retracted"`
	ConfigID       *string `json:"config_id"`
	SourceBranch   string  `json:"source_branch,omitempty"`
	Branches       int64   `json:"branches,omitempty"`
}

// heads are a ledger's heads as Fluree's records carry them.
type heads struct {
	CommitHeadID *string `json:"commit_head_id"`
	CommitT      int64   `json:"commit_t"`
	IndexHeadID  *string `json:"index_head_id"`
	IndexT       int64   `json:"index_t"`
}

// nsRecordResp is the NsRecordResponse of GET /storage/ns/{alias}: NsRecord
// with default_context and config_id left out when absent, and no
// "serving". encoding/json prefers these shallower fields to nsRecord's,
// and puts them last.
type nsRecordResp struct {
	nsRecord
	DefaultContext *string `json:"default_context,omitempty"`
	ConfigID       *string `json:"config_id,omitempty"`
}

// graphSourceRecord is Fluree's GraphSourceRecord.
type graphSourceRecord struct {
	GraphSourceID string   `json:"graph_source_id"`
	Name          string   `json:"name"`
	Branch        string   `json:"branch"`
	SourceType    any      `json:"source_type"`
	Config        string   `json:"config"`
	Dependencies  []string `json:"dependencies"`
	IndexID       *string  `json:"index_id"`
	IndexT        int64    `json:"index_t"`
	Retracted     bool     `json:"retracted"`
}

// nsRecordOf maps a ledger to Fluree's NsRecord: head and index addresses,
// and config's default_context and config_id strings, must be CIDs; status
// and the other config keys have no place on Fluree's wire.
func nsRecordOf(rec *model.Record) (nsRecord, error) {
	head, err := refOf(rec.ID, model.Head, *rec.Head)
	if err != nil {
		return nsRecord{}, err
	}
	index, err := refOf(rec.ID, model.Index, *rec.Index)
	if err != nil {
		return nsRecord{}, err
	}
	ns := nsRecord{
		LedgerID: rec.ID.String(), Name: rec.ID.Name, Branch: rec.ID.Branch,
		heads:     heads{CommitHeadID: head.ID, CommitT: head.T, IndexHeadID: index.ID, IndexT: index.T},
		Retracted: rec.Retracted, SourceBranch: rec.SourceBranch, Branches: rec.Branches,
	}
	for _, f := range []struct {
		key string
		dst **string
	}{{"default_context", &ns.DefaultContext}, {"config_id", &ns.ConfigID}} {
		s, ok := rec.Config.Payload[f.key].(string)
		if !ok {
			continue
		}
		if err := cid.Parse(s); err != nil {
			return nsRecord{}, notExpressible(rec.ID, f.key, err)
		}
		*f.dst = &s
	}
	return ns, nil
}

// sourceTypes maps source types to Fluree's GraphSourceType variants.
var sourceTypes = map[string]string{
	"db:Bm25Index": "Bm25", "db:HnswIndex": "Vector", "db:GeoIndex": "Geo",
	"db:R2rmlMapping": "R2rml", "db:IcebergMapping": "Iceberg",
}

// flureeTypeString is Fluree's to_type_string of a source type.
func flureeTypeString(st string) string {
	if rest, ok := strings.CutPrefix(st, "db:"); ok {
		return "f:" + rest
	}
	return st
}

// sourceTypeEnum is the serde form of GraphSourceType: a unit variant's
// name, or {"Unknown": type string}.
func sourceTypeEnum(st string) any {
	if v, ok := sourceTypes[st]; ok {
		return v
	}
	return map[string]string{"Unknown": flureeTypeString(st)}
}

// configText is a graph source's config as JSON text ("{}" when unborn).
func configText(rec *model.Record) string {
	if rec.Config != nil && rec.Config.Payload != nil {
		if b, err := rec.Config.Payload.MarshalJSON(); err == nil {
			return string(b)
		}
	}
	return "{}"
}

func graphSourceOf(rec *model.Record) (graphSourceRecord, error) {
	index, err := refOf(rec.ID, model.Index, *rec.Index)
	if err != nil {
		return graphSourceRecord{}, err
	}
	return graphSourceRecord{
		GraphSourceID: rec.ID.String(), Name: rec.ID.Name, Branch: rec.ID.Branch, Retracted: rec.Retracted,
		SourceType: sourceTypeEnum(rec.SourceType), Config: configText(rec),
		Dependencies: append([]string{}, rec.Dependencies...), IndexID: index.ID, IndexT: index.T,
	}, nil
}

// Secret redaction of graph-source configs in events, as Fluree does: a
// scalar under a secret-looking key becomes "[redacted]"; a container under
// one has every scalar inside redacted except env_var and java_property
// strings; {"secret_ref": "..."} stays, being a reference, not a secret.
var secretKeys = map[string]bool{
	"client_secret": true, "token": true, "secret": true, "password": true, "passwd": true,
	"access_key_id": true, "secret_access_key": true, "session_token": true, "default_val": true,
	"refresh_token": true,
}

func isSecretKey(k string) bool {
	l := strings.ToLower(k)
	return secretKeys[l] || strings.HasSuffix(l, "_token") || strings.HasSuffix(l, "_secret") || strings.HasSuffix(l, "_password")
}

const redacted = "[redacted]"

// redactConfig returns text with its secrets replaced (whole when it does
// not parse).
func redactConfig(text string) string {
	obj, err := model.ParseObject([]byte(text))
	if err != nil || obj == nil {
		return `"[redacted:unparseable]"`
	}
	if !redact(map[string]any(obj), false) {
		return text
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		return `"[redacted:unserializable]"`
	}
	return string(b)
}

// redact redacts the secrets in v, a container: under a secret key
// (inside) every scalar but an env_var or java_property string.
func redact(v any, inside bool) bool {
	changed := false
	visit := func(k string, e any, set func()) {
		_, isStr := e.(string)
		switch {
		case !inside && !isSecretKey(k):
			changed = redact(e, false) || changed
		case !inside && isSecretRef(e),
			inside && isStr && (strings.EqualFold(k, "env_var") || strings.EqualFold(k, "java_property")):
		case isContainer(e):
			changed = redact(e, true) || changed
		case e != nil:
			set()
			changed = true
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			visit(k, e, func() { x[k] = redacted })
		}
	case []any:
		for i, e := range x {
			visit("", e, func() { x[i] = redacted })
		}
	}
	return changed
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

func isSecretRef(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	_, ok = m["secret_ref"].(string)
	return ok
}
