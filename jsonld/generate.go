package jsonld

import (
	"encoding/json"
	"fmt"
	"strconv"

	"nameservice.dev/nameservice/model"
)

// generators return the value of a member of their part for this file,
// and false when the member is not written (not applicable, or at its
// default).
var generators = map[Part]func(*writer, string) (any, bool, error){
	Identity: (*writer).identity, HeadPart: (*writer).head, IndexPart: (*writer).index,
	StatusPart: (*writer).status, ConfigPart: (*writer).config,
}

func number(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

func (w *writer) identity(name string) (any, bool, error) {
	r := w.rec
	switch name {
	case "ledger":
		return map[string]any{"@id": r.ID.Name}, !w.graph(), nil
	case "name":
		return r.ID.Name, w.graph(), nil
	case "branch":
		return r.ID.Branch, true, nil
	case "graphSourceDependencies":
		// Fluree's reader requires the list: in its dialect an absent one
		// is written empty and marked by dependenciesAbsent.
		if r.Dependencies == nil {
			return []string{}, w.graph() && w.Dialect == FlureeV4, nil
		}
		return r.Dependencies, w.graph(), nil
	case "dependenciesAbsent":
		return true, w.graph() && w.Dialect == FlureeV4 && r.Dependencies == nil, nil
	case "createdAt":
		return number(r.CreatedAt), r.CreatedAt != 0, nil
	case "retracted":
		// Only when the status alone would say otherwise.
		return r.Retracted, r.Retracted != (r.Status != nil && r.Status.State() == model.StateRetracted), nil
	case "sourceBranch":
		return r.SourceBranch, r.SourceBranch != "", nil
	case "branchPoint":
		return w.branchPoint(), r.SourceBranch != "", nil
	case "branches":
		return number(r.Branches), r.Branches != 0, nil
	}
	return nil, false, nil
}

func (w *writer) head(name string) (any, bool, error) {
	h := w.rec.Head
	if h == nil {
		return nil, false, nil
	}
	ref, born := h.Ref()
	switch name {
	case "t":
		return number(h.V), true, nil
	case "ledgerCommit":
		return map[string]any{"@id": ref.Address}, born && w.Dialect == Spec, nil
	case "commitCid":
		return ref.Address, born && w.Dialect == FlureeV4, nil
	}
	return nil, false, nil
}

func (w *writer) index(name string) (any, bool, error) {
	ix := w.rec.Index
	if ix == nil {
		return nil, false, nil
	}
	ref, born := ix.Ref()
	if !born {
		return nil, false, nil
	}
	spec, v4 := w.Dialect == Spec, w.Dialect == FlureeV4
	switch name {
	case "ledgerIndex":
		if spec {
			return map[string]any{"@id": ref.Address, w.key("t"): number(ix.V)}, !w.graph(), nil
		}
		return map[string]any{w.key("cid"): ref.Address, w.key("t"): number(ix.V)}, !w.graph(), nil
	case "indexGraphs":
		if ref.Graphs == nil || w.graph() {
			return nil, false, nil
		}
		b, err := json.Marshal(ix.Payload["graphs"])
		return map[string]any{"@value": string(b)}, err == nil, nil
	case "indexAddress":
		return ref.Address, w.graph() && spec, nil
	case "indexT":
		return number(ix.V), w.graph() && spec, nil
	case "graphSourceIndex":
		return map[string]any{"@type": w.key("ContentId"), w.key("graphSourceIndexCid"): ref.Address}, w.graph() && v4, nil
	case "graphSourceIndexT":
		return number(ix.V), w.graph() && v4, nil
	}
	return nil, false, nil
}

func (w *writer) status(name string) (any, bool, error) {
	s := w.rec.Status
	if s == nil {
		return nil, false, nil
	}
	switch name {
	case "status":
		state, ok := s.Payload["state"].(string)
		if !ok {
			return nil, false, fmt.Errorf("status has no string state")
		}
		return state, true, nil
	case "statusV":
		return number(s.V), w.Dialect == Spec || !w.graph() || s.V != 1, nil
	case "statusMeta":
		meta := s.Payload.Clone()
		delete(meta, "state")
		return meta, len(meta) > 0, nil
	}
	return nil, false, nil
}

func (w *writer) config(name string) (any, bool, error) {
	c := w.rec.Config
	switch {
	case c == nil:
		return nil, false, nil
	case name == "configV":
		return number(c.V), w.Dialect == Spec || !w.graph() || c.V != 1, nil
	case w.graph() && name == "graphSourceConfig" && c.Payload == nil:
		// Fluree v4 requires the member: an unborn config is "{}" at configV 0.
		return map[string]any{"@value": "{}"}, w.Dialect == FlureeV4, nil
	case w.graph() && name == "graphSourceConfig":
		text, err := c.Payload.MarshalJSON()
		return map[string]any{"@value": string(text)}, err == nil, err
	case w.graph() || c.Payload == nil:
		return nil, false, nil
	}
	switch name {
	case "defaultContextCid", "configCid":
		s, ok := c.Payload[configKeys[name]].(string)
		return s, ok, nil
	case "configMeta":
		// The ledger config less the keys with members of their own:
		// default_context and config_id when they are strings.
		meta := c.Payload.Clone()
		for _, k := range configKeys {
			if _, ok := c.Payload[k].(string); ok {
				delete(meta, k)
			}
		}
		return meta, len(meta) > 0, nil
	}
	return nil, false, nil
}

// branchPoint is Fluree's {source, commitCid, t}, in its member order: t 0
// and no commitCid for a branch created at its source's head.
func (w *writer) branchPoint() json.RawMessage {
	r := w.rec
	m := []member{{key: w.key("source"), raw: mustJSON(r.SourceBranch)}}
	var t int64
	if bp := r.BranchPoint; bp != nil {
		m = append(m, member{key: w.key("commitCid"), raw: mustJSON(bp.Address)})
		t = bp.T
	}
	return objectJSON(append(m, member{key: w.key("t"), raw: mustJSON(number(t))}))
}
